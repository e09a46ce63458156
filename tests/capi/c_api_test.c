/* The C API used from C (compiled as C11, not C++): the header is valid C,
 * and the library's errors, buffers, cancellation and results hold against
 * values worked out by hand. The Python tests (python/tests) compare the
 * rest with the charkit program's results. */
#include <charkit/capi/c_api.h>
/* The old path still works for one release (it forwards to the new one). */
#include <charkit/c_api.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: CHECK failed: %s (last error: %s: %s)\n", __FILE__, __LINE__, #cond, \
              charkit_last_error_code(), charkit_last_error_message());                            \
      ++failures;                                                                                  \
    }                                                                                              \
  } while (0)

static const char* kSpec =
    "{\"bones\": [{\"name\": \"upper\", \"axes\": ["
    "{\"enabled\": false, \"min_deg\": 0, \"max_deg\": 0},"
    "{\"enabled\": false, \"min_deg\": 0, \"max_deg\": 0},"
    "{\"enabled\": true, \"min_deg\": -60, \"max_deg\": 60}]}], \"curves\": []}";

static int calls = 0;
static int cancel_at_first(void* user, uint64_t done, uint64_t total, double loss) {
  (void)user;
  (void)done;
  (void)total;
  (void)loss;
  ++calls;
  return 1;
}

/* A 2-joint chain: root at the origin, "upper" one unit up +Y, both at rest
 * with identity rotations. Vertex 0 belongs to the root, vertex 1 to upper,
 * vertex 2 half to each; vertex 3 to upper, further out. */
static charkit_rig* make_rig(void) {
  const char* names[2] = {"root", "upper"};
  const int32_t parents[2] = {-1, 0};
  const float trs[20] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, /* root */
                         0, 1, 0, 0, 0, 0, 1, 1, 1, 1 /* upper */};
  const float positions[12] = {0, 0.5f, 0, 0, 2, 0, 0, 1, 0, 1, 2, 0};
  const uint32_t joints[16] = {0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0};
  const float weights[16] = {1, 0, 0, 0, 1, 0, 0, 0, 0.5f, 0.5f, 0, 0, 1, 0, 0, 0};
  const uint32_t triangles[6] = {0, 1, 2, 1, 3, 2};
  charkit_rig* rig = NULL;
  CHECK(charkit_rig_create("chain", 2, names, parents, trs, NULL, 4, positions, joints, weights, 2,
                           triangles, &rig) == CHARKIT_OK);
  return rig;
}

static int near(float a, float b, float eps) {
  return fabsf(a - b) <= eps;
}

int main(void) {
  CHECK(charkit_c_api_version() == CHARKIT_C_API_VERSION);
  CHECK(strlen(charkit_version()) >= 5);

  /* Errors: arguments, then a located input error, then a cleared error. */
  charkit_spec* spec = NULL;
  CHECK(charkit_spec_from_json(NULL, &spec) == CHARKIT_BAD_ARGUMENT);
  CHECK(strcmp(charkit_last_error_code(), "CAPI_ARGUMENT") == 0);
  CHECK(charkit_spec_from_json("{\"bones\": [", &spec) == CHARKIT_INVALID_INPUT);
  CHECK(strncmp(charkit_last_error_code(), "JSON_", 5) == 0);
  CHECK(spec == NULL);
  CHECK(charkit_spec_from_json(
            "{\"bones\": [{\"name\": \"a\"}, {\"name\": \"a\"}], \"curves\": []}", &spec) ==
        CHARKIT_INVALID_INPUT);
  CHECK(charkit_spec_from_json(kSpec, &spec) == CHARKIT_OK);
  CHECK(charkit_last_error_code()[0] == '\0');
  CHECK(charkit_spec_bone_count(spec) == 1 && charkit_spec_curve_count(spec) == 0);
  CHECK(charkit_spec_feature_count(spec, CHARKIT_LAYOUT_AXIS_ANGLE) == 3);
  CHECK(charkit_spec_feature_count(spec, CHARKIT_LAYOUT_ENGINE) == 6);
  CHECK(charkit_spec_feature_count(spec, 7) == 0);

  /* Sampling: the rest pose first, then rotations about Z only, within the range. */
  double rot[11 * 4], euler[11 * 3];
  CHECK(charkit_sample_poses(spec, 10, 777, rot, euler, NULL) == CHARKIT_OK);
  CHECK(rot[0] == 0 && rot[1] == 0 && rot[2] == 0 && rot[3] == 1);
  for (int i = 1; i <= 10; ++i) {
    const double* q = rot + i * 4;
    CHECK(q[0] == 0 && q[1] == 0);
    CHECK(fabs(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] - 1.0) < 1e-12);
    CHECK(euler[i * 3 + 2] >= -60 && euler[i * 3 + 2] <= 60);
    /* q = (0, 0, sin(z/2), cos(z/2)) for the sampled angle z. */
    const double half = euler[i * 3 + 2] * 3.14159265358979 / 360.0;
    CHECK(fabs(q[2] - sin(half)) < 1e-12 && fabs(q[3] - cos(half)) < 1e-12);
  }
  /* Features of a 90-degree turn about Z: the rotation vector (0, 0, pi/2). */
  const double quarter[4] = {0, 0, 0.70710678118654752, 0.70710678118654752};
  float f3[3];
  CHECK(charkit_pose_features(spec, CHARKIT_LAYOUT_AXIS_ANGLE, quarter, NULL, NULL, 1, f3) ==
        CHARKIT_OK);
  CHECK(near(f3[0], 0, 1e-6f) && near(f3[1], 0, 1e-6f) && near(f3[2], 1.5707963f, 1e-5f));
  const double zero_q[4] = {0, 0, 0, 0};
  CHECK(charkit_pose_features(spec, CHARKIT_LAYOUT_AXIS_ANGLE, zero_q, NULL, NULL, 1, f3) ==
        CHARKIT_BAD_ARGUMENT);

  /* Skinning by hand: "upper" turned 90 degrees about Z around (0, 1, 0)
   * takes (0, 2, 0) to (-1, 1, 0) and (1, 2, 0) to (-1, 2, 0); the
   * half-weighted vertex at the joint stays put; the root's vertex too. */
  charkit_rig* rig = make_rig();
  float skinned[12];
  CHECK(charkit_rig_skin(rig, spec, quarter, NULL, skinned) == CHARKIT_OK);
  const float expect[12] = {0, 0.5f, 0, -1, 1, 0, 0, 1, 0, -1, 2, 0};
  for (int k = 0; k < 12; ++k) CHECK(near(skinned[k], expect[k], 1e-5f));
  /* Bad rigs: a parent after its child, a weight past the joints. */
  {
    const char* names[2] = {"a", "b"};
    const int32_t parents[2] = {1, -1};
    const float trs[20] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1};
    const float pos[3] = {0, 0, 0};
    const uint32_t j[4] = {0, 0, 0, 0};
    const uint32_t j_bad[4] = {5, 0, 0, 0};
    const float w[4] = {1, 0, 0, 0};
    const int32_t parents_ok[2] = {-1, 0};
    charkit_rig* bad = NULL;
    CHECK(charkit_rig_create("x", 2, names, parents, trs, NULL, 1, pos, j, w, 0, NULL, &bad) ==
          CHARKIT_BAD_ARGUMENT);
    CHECK(bad == NULL);
    CHECK(charkit_rig_create("x", 2, names, parents_ok, trs, NULL, 1, pos, j_bad, w, 0, NULL,
                             &bad) == CHARKIT_INVALID_INPUT);
    CHECK(bad == NULL);
  }

  /* A dataset from target positions equal to plain LBS plus a known bind-space
   * bump on vertex 3 (+0.1 along the bone's own +X, which the 90-degree turn
   * maps to world +Y): the stored deltas are that bump, zero elsewhere. */
  double poses_rot[2 * 4] = {0, 0, 0, 1, 0, 0, 0.70710678118654752, 0.70710678118654752};
  float targets[2 * 12];
  CHECK(charkit_rig_skin(rig, spec, poses_rot, NULL, targets) == CHARKIT_OK);
  CHECK(charkit_rig_skin(rig, spec, poses_rot + 4, NULL, targets + 12) == CHARKIT_OK);
  targets[12 + 3 * 3 + 1] += 0.1f;
  charkit_dataset* ds = NULL;
  double lbs[2] = {-1, -1};
  CHECK(charkit_dataset_from_positions(rig, spec, CHARKIT_LAYOUT_AXIS_ANGLE, 2, poses_rot, NULL,
                                       targets, lbs, &ds) == CHARKIT_OK);
  CHECK(near((float)lbs[1], 0.1f, 1e-5f));
  uint64_t samples = 0, features = 0, vertices = 0;
  int layout = -1;
  CHECK(charkit_dataset_shape(ds, &samples, &features, &vertices, &layout) == CHARKIT_OK);
  CHECK(samples == 2 && features == 3 && vertices == 4 && layout == CHARKIT_LAYOUT_AXIS_ANGLE);
  float deltas[24];
  CHECK(charkit_dataset_deltas(ds, deltas, 23) == CHARKIT_BAD_ARGUMENT);
  CHECK(charkit_dataset_deltas(ds, deltas, 24) == CHARKIT_OK);
  for (int k = 0; k < 24; ++k) CHECK(near(deltas[k], k == 12 + 9 ? 0.1f : 0.0f, 1e-5f));

  /* Linear training on deltas that are exactly features x W (W known):
   * ridge with a tiny lambda gives W back, so offsets reproduce the deltas. */
  {
    enum { N = 12, V = 4 };
    float feats[N * 3], ds_deltas[N * V * 3];
    float z[N];
    for (int i = 0; i < N; ++i) {
      z[i] = -1.0f + 2.0f * (float)i / (float)(N - 1);
      feats[i * 3] = 0;
      feats[i * 3 + 1] = 0;
      feats[i * 3 + 2] = z[i];
      for (int k = 0; k < V * 3; ++k) ds_deltas[i * V * 3 + k] = z[i] * 0.01f * (float)(k + 1);
    }
    charkit_dataset* lin = NULL;
    CHECK(charkit_dataset_create(spec, CHARKIT_LAYOUT_AXIS_ANGLE, "chain", N, V, feats, ds_deltas,
                                 &lin) == CHARKIT_OK);
    charkit_model* model = NULL;
    CHECK(charkit_model_train(lin, "{\"kind\": \"linear\", \"lambda\": 1e-9, \"holdout\": 0}", 0,
                              NULL, NULL, NULL, NULL, &model) == CHARKIT_OK);
    float out[V * 3];
    const float row[3] = {0, 0, 0.5f};
    CHECK(charkit_model_offsets(model, row, 1, out) == CHARKIT_OK);
    for (int k = 0; k < V * 3; ++k) CHECK(near(out[k], 0.5f * 0.01f * (float)(k + 1), 1e-5f));
    float w[1];
    CHECK(charkit_model_weights(model, row, 1, w) == CHARKIT_BAD_ARGUMENT);
    char* info = NULL;
    CHECK(charkit_model_info_json(model, &info) == CHARKIT_OK);
    CHECK(info && strstr(info, "\"kind\":\"linear\"") != NULL);
    charkit_free(info);

    /* Options are checked, never ignored. */
    charkit_model* none = NULL;
    CHECK(charkit_model_train(lin, "{\"kind\": \"linear\", \"lamda\": 0}", 0, NULL, NULL, NULL,
                              NULL, &none) == CHARKIT_BAD_ARGUMENT);
    CHECK(strstr(charkit_last_error_message(), "lamda") != NULL);
    CHECK(charkit_model_train(lin, "{\"kind\": \"cubic\"}", 0, NULL, NULL, NULL, NULL, &none) ==
          CHARKIT_BAD_ARGUMENT);
    /* Cancelling: the first progress call stops a neural run; nothing is made. */
    calls = 0;
    CHECK(charkit_model_train(lin, "{\"kind\": \"neural\", \"iterations\": 600, \"hidden\": [8]}",
                              0, NULL, NULL, cancel_at_first, NULL, &none) == CHARKIT_CANCELLED);
    CHECK(calls == 1 && none == NULL);
    CHECK(strcmp(charkit_last_error_code(), "CAPI_CANCELLED") == 0);
    charkit_model_free(model);
    charkit_dataset_free(lin);
  }

  /* I/O errors are status 2 with an IO_ code. */
  charkit_model* missing = NULL;
  CHECK(charkit_model_load("/nonexistent/charkit/pose_model.json", &missing) == CHARKIT_IO_ERROR);
  CHECK(strncmp(charkit_last_error_code(), "IO_", 3) == 0);
  char* report = NULL;
  CHECK(charkit_bem_validate("/nonexistent/x.bem", &report) == CHARKIT_IO_ERROR && !report);
  charkit_bem_package* bem = NULL;
  CHECK(charkit_bem_open("/nonexistent/x.bem", &bem) == CHARKIT_IO_ERROR && !bem);
  CHECK(charkit_bem_open(NULL, &bem) == CHARKIT_BAD_ARGUMENT && !bem);
  CHECK(strcmp(charkit_last_error_code(), "CAPI_ARGUMENT") == 0);
  uint64_t bem_count = 0;
  CHECK(charkit_bem_mesh_floats(NULL, 0, "POSITION", NULL, 0, &bem_count) == CHARKIT_BAD_ARGUMENT);
  {
    /* Packing from arrays: the description is checked against the array
     * table (indices, byte sizes, NULLs) before the template is read. */
    const float tri[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    const uint32_t idx[3] = {0, 1, 2};
    const void* arrays[2] = {tri, idx};
    uint64_t bytes[2] = {sizeof tri, sizeof idx};
    const char* scene =
        "{\"meshes\": [{\"name\": \"mesh_0\", \"attributes\": [{\"name\": \"POSITION\", "
        "\"data\": 0}], \"primitives\": [{\"indices\": 1, \"count\": 3, \"material\": "
        "\"m\"}]}]}";
    CHECK(charkit_bem_pack_arrays("/nonexistent/x.bem", NULL, arrays, bytes, 2, NULL, NULL,
                                  &report) == CHARKIT_BAD_ARGUMENT &&
          !report);
    CHECK(charkit_bem_pack_arrays("/nonexistent/x.bem", scene, NULL, NULL, 2, NULL, NULL,
                                  &report) == CHARKIT_BAD_ARGUMENT &&
          !report);
    bytes[1] = 8; /* two indices; the description says three */
    CHECK(charkit_bem_pack_arrays("/nonexistent/x.bem", scene, arrays, bytes, 2, NULL, NULL,
                                  &report) == CHARKIT_BAD_ARGUMENT &&
          !report);
    CHECK(strstr(charkit_last_error_message(), "/meshes/0/primitives/0/indices") != NULL);
    bytes[1] = sizeof idx;
    CHECK(charkit_bem_pack_arrays("/nonexistent/x.bem", scene, arrays, bytes, 1, NULL, NULL,
                                  &report) == CHARKIT_BAD_ARGUMENT &&
          !report);
    arrays[0] = NULL;
    CHECK(charkit_bem_pack_arrays("/nonexistent/x.bem", scene, arrays, bytes, 2, NULL, NULL,
                                  &report) == CHARKIT_BAD_ARGUMENT &&
          !report);
    arrays[0] = tri;
    CHECK(charkit_bem_pack_arrays("/nonexistent/x.bem", scene, arrays, bytes, 2,
                                  "{\"to\": \"tar\"}", NULL, &report) == CHARKIT_BAD_ARGUMENT &&
          !report);
    /* A well-formed scene reaches the template, which is not there. */
    CHECK(charkit_bem_pack_arrays("/nonexistent/x.bem", scene, arrays, bytes, 2, NULL, NULL,
                                  &report) == CHARKIT_IO_ERROR &&
          !report);
  }
  charkit_bem_package_free(NULL);

  charkit_dataset_free(ds);
  charkit_rig_free(rig);
  charkit_spec_free(spec);
  charkit_free(NULL);
  charkit_spec_free(NULL);

  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("c_api_test: all checks passed\n");
  return 0;
}
