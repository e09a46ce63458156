/* charkit's C API: a small, stable C ABI over the pose-driven deformer and
 * the basics of BEM and motion, for other languages (the Python package in
 * python/charkit loads it with ctypes) and for programs that do not want
 * charkit's C++ types. The library is libcharkit_c.so; docs/c_api.md says
 * how to build and load it and what every function does.
 *
 * Conventions
 * - Every function that can fail returns a charkit_status. On failure the
 *   calling thread's last error (charkit_last_error_code / _message /
 *   _location) says why; on success it is cleared.
 * - Objects are opaque handles made by *_create / *_load / *_train and
 *   released by the matching *_free (NULL is accepted and ignored). A handle
 *   may be used by one thread at a time; distinct handles on distinct threads
 *   are independent.
 * - Arrays are caller-owned buffers of float32 (or uint32 / int32), C order,
 *   sized as each function documents; the library never keeps a pointer to
 *   them after it returns. Poses are float64: rotations as unit quaternions
 *   (x, y, z, w), Euler angles and curve values, exactly as charkit samples
 *   and stores them, so features computed here are bit-equal to the CLI's;
 *   positions, features, deltas and weights are float32.
 * - Strings are UTF-8 and NUL-terminated. A string the library returns
 *   through a `char**` is the caller's and is released with charkit_free.
 * - Feature layouts: CHARKIT_LAYOUT_AXIS_ANGLE (3 floats per bone: the
 *   rotation vector, zero at rest) and CHARKIT_LAYOUT_ENGINE (6 floats per
 *   bone: the Unreal `.nmn` layout), then one float per curve
 *   (docs/deformer/datasets.md).
 * - Progress callbacks get (user, steps done, steps in all, current loss) and
 *   return 0 to go on or anything else to cancel: the call then returns
 *   CHARKIT_CANCELLED and makes nothing.
 *
 * Compatibility: CHARKIT_C_API_VERSION grows by one whenever a function is
 * added; an existing function's meaning and signature never change within a
 * major version of charkit. charkit_c_api_version() reports the library's. */
#ifndef CHARKIT_C_API_H
#define CHARKIT_C_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define CHARKIT_C_EXPORT __declspec(dllexport)
#else
#define CHARKIT_C_EXPORT __attribute__((visibility("default")))
#endif

#define CHARKIT_C_API_VERSION 1

typedef enum charkit_status {
  CHARKIT_OK = 0,
  CHARKIT_INVALID_INPUT = 1, /* a file or value that is not what it should be */
  CHARKIT_IO_ERROR = 2,      /* a file that cannot be opened, read or written */
  CHARKIT_BAD_ARGUMENT = 3,  /* a NULL pointer, a size that does not match, an unknown option */
  CHARKIT_CANCELLED = 4,     /* a progress callback asked to stop */
  CHARKIT_INTERNAL = 5       /* out of memory or a bug: the message says which */
} charkit_status;

enum { CHARKIT_LAYOUT_AXIS_ANGLE = 0, CHARKIT_LAYOUT_ENGINE = 1 };
/* CHARKIT_CLAMP_AUTO (charkit_import_network only): none when the sidecar
 * records the outputs as learned-basis coefficients, else unit. */
enum {
  CHARKIT_CLAMP_NONE = 0,
  CHARKIT_CLAMP_UNIT = 1,
  CHARKIT_CLAMP_TRAINING_RANGE = 2,
  CHARKIT_CLAMP_AUTO = 3
};

typedef int (*charkit_progress_fn)(void* user, uint64_t done, uint64_t total, double loss);

typedef struct charkit_spec charkit_spec;
typedef struct charkit_rig charkit_rig;
typedef struct charkit_dataset charkit_dataset;
typedef struct charkit_model charkit_model;

/* ---- Library ------------------------------------------------------------ */

/* CHARKIT_C_API_VERSION of the library that is loaded. */
CHARKIT_C_EXPORT int charkit_c_api_version(void);
/* charkit's version, "MAJOR.MINOR.PATCH". Static storage. */
CHARKIT_C_EXPORT const char* charkit_version(void);
/* The calling thread's last error: its code (e.g. "MODEL_SHAPE", "" when the
 * last call succeeded), its one-line message, and where in the input it was
 * ("" when nowhere in particular). Valid until the thread's next call. */
CHARKIT_C_EXPORT const char* charkit_last_error_code(void);
CHARKIT_C_EXPORT const char* charkit_last_error_message(void);
CHARKIT_C_EXPORT const char* charkit_last_error_location(void);
/* Releases a string the library returned. */
CHARKIT_C_EXPORT void charkit_free(void* p);

/* ---- Input spec: the bones and curves that drive a deformer ------------- */

/* From JSON: {"bones": [{"name", "axes": [{"enabled", "min_deg", "max_deg"}
 * x3]}], "curves": [{"name", "min", "max"}]} (docs/deformer/datasets.md). */
CHARKIT_C_EXPORT charkit_status charkit_spec_from_json(const char* json, charkit_spec** out);
CHARKIT_C_EXPORT void charkit_spec_free(charkit_spec* spec);
CHARKIT_C_EXPORT charkit_status charkit_spec_to_json(const charkit_spec* spec, char** out_json);
CHARKIT_C_EXPORT uint64_t charkit_spec_bone_count(const charkit_spec* spec);
CHARKIT_C_EXPORT uint64_t charkit_spec_curve_count(const charkit_spec* spec);
/* Features per pose in a layout (0 for a NULL spec or an unknown layout). */
CHARKIT_C_EXPORT uint64_t charkit_spec_feature_count(const charkit_spec* spec, int layout);

/* The rest pose, then `random_poses` seeded random poses, exactly as
 * `charkit deformer sample --poses N --seed S` draws them. Writes
 * (random_poses + 1) x bones x 4 rotations, and, where not NULL,
 * (random_poses + 1) x bones x 3 Euler angles (degrees, XYZ) and
 * (random_poses + 1) x curves curve values. */
CHARKIT_C_EXPORT charkit_status charkit_sample_poses(const charkit_spec* spec,
                                                     uint64_t random_poses, uint64_t seed,
                                                     double* rotations, double* euler_deg,
                                                     double* curves);

/* Features of `poses` poses in a layout: rotations poses x bones x 4 (each
 * bone's rotation relative to its rest rotation), curves poses x curves (NULL
 * when the spec has none), rest_local bones x 4 (the engine layout's rest
 * local rotations; NULL = identity). A quaternion whose length is within
 * 1e-9 of 1 is used as given, others are normalised. Writes poses x
 * feature_count floats. */
CHARKIT_C_EXPORT charkit_status charkit_pose_features(const charkit_spec* spec, int layout,
                                                      const double* rotations, const double* curves,
                                                      const double* rest_local, uint64_t poses,
                                                      float* out);

/* ---- Rig: a skeleton and a skinned mesh --------------------------------- */

/* A rig from arrays, in one space (the "world" the poses are measured in):
 * joints parents-first (parents[j] < j, -1 for a root), rest local
 * transforms as 10 floats per joint (translation x y z, rotation x y z w,
 * scale x y z), inverse bind matrices 16 floats per joint, column-major
 * (NULL: each joint's inverse rest world matrix); the mesh's bind-pose
 * positions (vertices x 3) with 4 joint indices and 4 weights per vertex
 * (weights summing to 1, or all 0 for a vertex no joint moves); triangles
 * (triangle_count x 3 vertex indices) may be NULL. */
CHARKIT_C_EXPORT charkit_status charkit_rig_create(const char* mesh_name, uint64_t joint_count,
                                                   const char* const* joint_names,
                                                   const int32_t* parents, const float* rest_trs,
                                                   const float* inverse_bind, uint64_t vertex_count,
                                                   const float* positions, const uint32_t* joints,
                                                   const float* weights, uint64_t triangle_count,
                                                   const uint32_t* triangles, charkit_rig** out);
/* A rig from a glTF, GLB or VRM file, as `charkit deformer sample` loads it:
 * the mesh named `mesh` (NULL: the first skinned mesh). */
CHARKIT_C_EXPORT charkit_status charkit_rig_load(const char* path, const char* mesh,
                                                 charkit_rig** out);
CHARKIT_C_EXPORT void charkit_rig_free(charkit_rig* rig);
/* Adds a morph target (vertices x 3 bind-space deltas); a target of that
 * name is replaced. */
CHARKIT_C_EXPORT charkit_status charkit_rig_add_morph(charkit_rig* rig, const char* name,
                                                      const float* deltas);
/* {"mesh", "vertices", "joints": [names], "parents": [...], "morphs": [names]} */
CHARKIT_C_EXPORT charkit_status charkit_rig_info_json(const charkit_rig* rig, char** out_json);
/* The rig's bind-pose positions (vertices x 3). */
CHARKIT_C_EXPORT charkit_status charkit_rig_positions(const charkit_rig* rig, float* out,
                                                      uint64_t count);
/* Plain linear blend skinning of the bind-pose positions plus `offsets`
 * (vertices x 3 bind-space deltas, NULL = none) for one pose: rotations
 * bones x 4 relative to rest for the spec's bones (other joints at rest).
 * Writes vertices x 3 world positions. */
CHARKIT_C_EXPORT charkit_status charkit_rig_skin(const charkit_rig* rig, const charkit_spec* spec,
                                                 const double* rotations, const float* offsets,
                                                 float* out);

/* ---- Datasets ----------------------------------------------------------- */

/* From arrays: features samples x feature_count(layout), deltas samples x
 * vertices x 3 (bind-space offsets from the rest mesh). Sample 0 should be
 * the rest pose. */
CHARKIT_C_EXPORT charkit_status charkit_dataset_create(const charkit_spec* spec, int layout,
                                                       const char* mesh_name, uint64_t samples,
                                                       uint64_t vertex_count, const float* features,
                                                       const float* deltas, charkit_dataset** out);
/* From posed target positions, as `deformer sample --targets pc2` builds
 * them: for pose i (rotations poses x bones x 4, curves poses x curves or
 * NULL) the mesh's world positions (poses x vertices x 3, e.g. what a DCC
 * tool's modifiers produce); the stored delta is inverse-LBS(target) - rest.
 * lbs_error, when not NULL, gets the mean and max distance of plain LBS from
 * the targets. */
CHARKIT_C_EXPORT charkit_status
charkit_dataset_from_positions(const charkit_rig* rig, const charkit_spec* spec, int layout,
                               uint64_t poses, const double* rotations, const double* curves,
                               const float* positions, double* lbs_error, charkit_dataset** out);
/* NAME.npz + NAME.json, as `charkit deformer sample` writes them. */
CHARKIT_C_EXPORT charkit_status charkit_dataset_load(const char* npz_path, charkit_dataset** out);
CHARKIT_C_EXPORT charkit_status charkit_dataset_save(const charkit_dataset* dataset,
                                                     const char* npz_path);
CHARKIT_C_EXPORT void charkit_dataset_free(charkit_dataset* dataset);
/* Sizes; any pointer may be NULL. */
CHARKIT_C_EXPORT charkit_status charkit_dataset_shape(const charkit_dataset* dataset,
                                                      uint64_t* samples, uint64_t* features,
                                                      uint64_t* vertices, int* layout);
/* Copies out the features (samples x features) or deltas (samples x
 * vertices x 3); count is the buffer's size in floats and must match. */
CHARKIT_C_EXPORT charkit_status charkit_dataset_features(const charkit_dataset* dataset, float* out,
                                                         uint64_t count);
CHARKIT_C_EXPORT charkit_status charkit_dataset_deltas(const charkit_dataset* dataset, float* out,
                                                       uint64_t count);
CHARKIT_C_EXPORT charkit_status charkit_dataset_spec(const charkit_dataset* dataset,
                                                     charkit_spec** out);

/* ---- Pose models -------------------------------------------------------- */

/* Trains a model on a dataset. options_json (NULL = defaults): {"kind":
 * "linear"|"neural", "lambda", "hidden": [..], "learning_rate", "weight_decay", "iterations",
 * "batch_size", "seed", "standardize", "activation": "elu"|"relu"|"tanh",
 * "clamp": "none"|"unit"|
 * "training-range", "basis": "learned"|"morph-targets", "basis_size",
 * "holdout", "split_seed", "targets": "bind-correction"|"rest-deformation" (what the
 * deltas are: recorded in the model's hyper), "validation" (neural: early stopping's share of
 * the training samples; default 0, none), "patience", "check_every"}; the
 * defaults are `charkit deformer train`'s.
 * Basis "morph-targets" weighs the morph_count targets given (names and
 * morph_count x vertices x 3 deltas). */
CHARKIT_C_EXPORT charkit_status charkit_model_train(const charkit_dataset* dataset,
                                                    const char* options_json, uint64_t morph_count,
                                                    const char* const* morph_names,
                                                    const float* morph_deltas,
                                                    charkit_progress_fn progress, void* user,
                                                    charkit_model** out);
/* pose_model.json (+ pose_model.npz beside it). */
CHARKIT_C_EXPORT charkit_status charkit_model_load(const char* json_path, charkit_model** out);
CHARKIT_C_EXPORT charkit_status charkit_model_save(const charkit_model* model,
                                                   const char* json_path);
CHARKIT_C_EXPORT void charkit_model_free(charkit_model* model);
/* {"kind", "layout", "mesh", "vertices", "features", "spec", "morphs":
 * [names], "fixed_first_morph", "clamp", "hyper", "stats": {...}} */
CHARKIT_C_EXPORT charkit_status charkit_model_info_json(const charkit_model* model,
                                                        char** out_json);
/* Bind-space offsets for `rows` feature rows: writes rows x vertices x 3. */
CHARKIT_C_EXPORT charkit_status charkit_model_offsets(const charkit_model* model,
                                                      const float* features, uint64_t rows,
                                                      float* out);
/* Morph weights of a neural model for `rows` feature rows (the fixed morph 0
 * included, clamped as the model says): writes rows x morph_count. */
CHARKIT_C_EXPORT charkit_status charkit_model_weights(const charkit_model* model,
                                                      const float* features, uint64_t rows,
                                                      float* out);
/* A neural model's morph targets: morph_count x vertices x 3. */
CHARKIT_C_EXPORT charkit_status charkit_model_morphs(const charkit_model* model, float* out,
                                                     uint64_t count);
/* The model's errors on a dataset's samples: {"samples", "mean", "max"}. */
CHARKIT_C_EXPORT charkit_status charkit_model_error_json(const charkit_model* model,
                                                         const charkit_dataset* dataset,
                                                         char** out_json);

/* ---- Engine bridge ------------------------------------------------------ */

/* Retrains the dataset in the engine layout and writes NAME.nmn, its
 * NAME.bmd_ue.json sidecar and NAME.morphs.npz, as `charkit deformer
 * export-nmn` does. options_json (NULL = defaults): {"hidden", "morphs",
 * "iterations", "batch_size", "learning_rate", "seed"}. out (may be NULL)
 * gets the exported network as a pose model (engine layout). */
CHARKIT_C_EXPORT charkit_status charkit_export_nmn(const charkit_rig* rig,
                                                   const charkit_dataset* dataset,
                                                   const char* options_json, const char* nmn_path,
                                                   charkit_progress_fn progress, void* user,
                                                   charkit_model** out);
/* Writes a trained model as it is (no retraining) to NAME.nmn, its
 * NAME.bmd_ue.json sidecar and NAME.morphs.npz, as `charkit deformer
 * export-nmn MODEL.json` does: a neural model in the engine layout with a
 * learned basis and no clamp (CHARKIT_ERROR otherwise, code NMN_EXPORT_MODEL,
 * saying why). The written file is read back and run against the model on
 * the dataset's feature rows (check_dataset, in the model's layout; NULL:
 * rows drawn around the model's input mean); *max_abs_diff (may be NULL)
 * gets the largest difference found (at most 1e-5, else an error). */
/* Why charkit_model_export_nmn would refuse the model (its kind, layout,
 * basis or clamp), in words: *out_why gets the reason (free with
 * charkit_free), or NULL when the model can be written as it is. */
CHARKIT_C_EXPORT charkit_status charkit_model_nmn_refusal(const charkit_model* model,
                                                          char** out_why);
CHARKIT_C_EXPORT charkit_status charkit_model_export_nmn(const charkit_model* model,
                                                         const charkit_dataset* check_dataset,
                                                         const char* nmn_path,
                                                         double* max_abs_diff);
/* A `.nmn` (global mode) or `.onnx` network as a pose model in the engine
 * layout, as `charkit deformer import` makes it: its inputs are the spec's
 * bones x 6 + curves; its outputs weigh the rig's morph targets (by the
 * NAME.bmd_ue.json sidecar's names when there is one beside the file, else
 * in order). NAME.morphs.npz beside a `.nmn` is put on the rig first. clamp
 * is CHARKIT_CLAMP_AUTO (the default of the tools: by the sidecar's
 * "outputs"), CHARKIT_CLAMP_UNIT or CHARKIT_CLAMP_NONE.
 * warnings_json (may be NULL) gets a JSON array of warning strings. */
CHARKIT_C_EXPORT charkit_status charkit_import_network(const char* path, charkit_rig* rig,
                                                       const charkit_spec* spec, int clamp,
                                                       char** warnings_json, charkit_model** out);
/* Runs a `.nmn` or `.onnx` file on raw inputs (rows x inputs) as `charkit
 * deformer run` does; writes rows x outputs floats into out (capacity
 * floats) and the output count into *outputs. */
CHARKIT_C_EXPORT charkit_status charkit_network_run(const char* path, const float* inputs,
                                                    uint64_t rows, uint64_t inputs_per_row,
                                                    float* out, uint64_t capacity,
                                                    uint64_t* outputs);

/* The pose library JSON of docs/deformer/bake.md §2 ({"format":
 * "charkit.pose_library", ...}) for `poses` named poses (rotations poses x
 * bones x 4, curves poses x curves or NULL); shape_keys (NULL, or one name
 * per pose) are written as each pose's "shape_key". */
CHARKIT_C_EXPORT charkit_status charkit_pose_library_json(
    const charkit_spec* spec, const char* mesh, uint64_t poses, const char* const* pose_names,
    const double* rotations, const double* curves, const char* const* shape_keys, char** out_json);

/* ---- BEM and motion ----------------------------------------------------- */

/* Validates a BEM package (.bem or .zip): the report as `charkit bem
 * validate --json` gives it ({"uri", "container", "declaredVersion",
 * "effectiveVersion", "neededVersion", "payloadCount", "valid", "issues":
 * {"numErrors", "numWarnings", "numInfos", "truncated", "messages": [...]}});
 * CHARKIT_OK even when it is invalid
 * (the report says so), an error only when the file cannot be read. */
CHARKIT_C_EXPORT charkit_status charkit_bem_validate(const char* path, char** out_json);
/* Converts a motion (BVH, keypoint JSON, FBX, glTF) into MediaPipe-33
 * keypoint NDJSON, as `charkit motion convert` does with its defaults. */
CHARKIT_C_EXPORT charkit_status charkit_motion_convert(const char* path, char** out_ndjson);

/* ---- BEM packages for editors (the Blender add-on's BEM panel) ---------- */

/* A valid BEM package opened whole: every mesh any option can select, with
 * every draw, built as `charkit bem export --raw-axes` builds a selection
 * (the package's own axes, UVs and image rows; sliders as morph targets at
 * their default ticks). Released with charkit_bem_package_free. An invalid
 * package is CAPI_BEM_INVALID with the validator's first error. */
typedef struct charkit_bem_package charkit_bem_package;
CHARKIT_C_EXPORT charkit_status charkit_bem_open(const char* path, charkit_bem_package** out);
CHARKIT_C_EXPORT void charkit_bem_package_free(charkit_bem_package* package);
/* Facts as JSON: "uri", "version", "package" (what `charkit bem inspect
 * --json` gives: option groups, meshes, textures, parameters, drivers, ...),
 * "manifest" (as stored), "meshes" (per exported mesh: "name" mesh_N,
 * "mesh", "vertices", "components", "attributes" [{"name", "components"}],
 * "primitives" [{"draw", "material", "indices"}] one per draw, "targets"
 * [{"name", "weight"}], "bones"), "skeleton" ({"joints", "parents",
 * "inverseBindMatrices"}), "images" ([{"name", "texture"}]), "warnings". */
CHARKIT_C_EXPORT charkit_status charkit_bem_package_json(const charkit_bem_package* package,
                                                         char** out_json);
/* One attribute of exported mesh `mesh` as floats, vertex by vertex: a
 * name from its "attributes" (POSITION, NORMAL, TANGENT, TEXCOORD_n,
 * COLOR_0, JOINTS_0, WEIGHTS_0, `_NAME`), or TARGET_k for morph target k's
 * displacements. *count gets the float count; out NULL asks only that. */
CHARKIT_C_EXPORT charkit_status charkit_bem_mesh_floats(const charkit_bem_package* package,
                                                        uint32_t mesh, const char* attribute,
                                                        float* out, uint64_t capacity,
                                                        uint64_t* count);
/* The triangle indices of primitive `primitive` (a draw) of exported mesh
 * `mesh`; out NULL asks only the count. */
CHARKIT_C_EXPORT charkit_status charkit_bem_mesh_indices(const charkit_bem_package* package,
                                                         uint32_t mesh, uint32_t primitive,
                                                         uint32_t* out, uint64_t capacity,
                                                         uint64_t* count);
/* Image `image` (a texture's top mip, decoded from its format) as RGBA8,
 * rows in the package's order (bottom row first); out NULL asks only the size. */
CHARKIT_C_EXPORT charkit_status charkit_bem_image_rgba(const charkit_bem_package* package,
                                                       uint32_t image, uint8_t* out,
                                                       uint64_t capacity, uint32_t* width,
                                                       uint32_t* height);
/* What a settings string selects (as `charkit bem select`): {"draws":
 * [[mesh, draw], ...], "components": [{"component", "operation", "mesh"}],
 * "groups": [{"id", "choice", "available"}], "parameters": [{"id",
 * "tick", "available"}], "warnings"}. options/parameters may be NULL. */
CHARKIT_C_EXPORT charkit_status charkit_bem_selection_json(const charkit_bem_package* package,
                                                           const char* options,
                                                           const char* parameters, char** out_json);
/* `charkit bem pack` from meshes given as arrays: the scene that scene_json
 * describes is built in memory, packed into the template package at
 * template_path, written through the writer and validated. scene_json:
 * {"meshes": [{"name" ("mesh_N" replaces template mesh N), "node" (the
 * object's name, optional), "attributes": [{"name", "data", "components"
 * (`_NAME` only, 1..4)}], "primitives": [{"indices", "count", "material"}],
 * "targets" (optional): [{"name", "positions", "weight"}], "joints"
 * (optional): [bone names that JOINTS_0 indexes]}], "images" (optional):
 * [{"name" (a texture's original_name), "width", "height", "pixels"}]}.
 * "data", "indices", "positions" and "pixels" are indices into arrays /
 * array_bytes (array_count entries; sizes in bytes, checked): attributes
 * are float32 vertices x components (POSITION, NORMAL 3; TANGENT, COLOR_0,
 * WEIGHTS_0 4; TEXCOORD_n 2) except JOINTS_0 (uint16 x 4); indices uint32
 * x count; targets float32 vertices x 3; pixels RGBA8 width x height x 4,
 * encoded as PNG here. options_json (NULL or an object): "rawAxes" (bool),
 * "to" ("bem" | "zip"), "spec" (the spec file's object), "textureFormats"
 * ({KEY: FORMAT}). The result is written to output_path when it is valid
 * and output_path is not NULL (NULL: validate only). *out_json: {"ok",
 * "error" ({"code", "message", "location"}, when not ok), "meshes",
 * "textures", "warnings", "issues" (the validator's), "version", "bytes"};
 * a scene that cannot be packed is CHARKIT_OK with "ok": false, a
 * description that does not match its arrays CHARKIT_BAD_ARGUMENT. */
CHARKIT_C_EXPORT charkit_status charkit_bem_pack_arrays(
    const char* template_path, const char* scene_json, const void* const* arrays,
    const uint64_t* array_bytes, uint64_t array_count, const char* options_json,
    const char* output_path, char** out_json);

#ifdef __cplusplus
}
#endif

#endif /* CHARKIT_C_API_H */
