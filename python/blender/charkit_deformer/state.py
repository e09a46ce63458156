"""What the add-on holds in memory per scene and mesh of its setup: the
training data of the last Generate Training Data run and the current model
(trained, loaded or imported), as charkit handles and numpy arrays. The model is saved with the .blend file
and comes back when it is opened (persist.py); the training data is not."""

import numpy as np

_sessions = {}


class Session:
    def __init__(self):
        # training data (Generate Training Data)
        self.data_objects = None       # (armature name, mesh name)
        self.data_bone_names = []
        self.data_curve_names = []
        self.spec = None               # charkit.InputSpec of the data
        self.pose_names = []
        self.rotations = None          # (N, B, 4) x y z w, relative to rest
        self.curves = None             # (N, C)
        self.positions = None          # (N, V, 3) evaluated mesh, armature space
        self.data_rig = None           # bridge.RigData
        self.linear_dataset = None
        self.neural_dataset = None
        self.corrective_dataset = None  # the neural dataset's deltas on axis-angle features
        self.lbs_error = None
        # the model
        self.model = None
        self.origin = None             # "trained" | "file" | "network"
        self.source = ""               # file it came from
        self.model_objects = None      # (armature name, mesh name)
        self.model_bone_names = []     # Blender bones feeding the model's inputs, in order
        self.model_curve_names = []    # shape keys feeding its curve inputs
        self.model_rig = None          # bridge.RigData: bind positions, weights
        self.rest_local = None         # (B, 4) for engine-layout models
        self.trained_from_neural = False
        self.stats = None
        self.plain_skinning = None     # (mean, max) of plain skinning over the training poses
        self.info = None
        self.exported_model = None     # the network export_nmn wrote, as a model
        self.preview_key = None

    def set_model(self, model, origin, source, objects, bone_names, curve_names, rig_data):
        self.model = model
        self.origin = origin
        self.source = source
        self.model_objects = objects
        self.model_bone_names = list(bone_names)
        self.model_curve_names = list(curve_names)
        self.model_rig = rig_data
        self.rest_local = rig_data.rest_local(bone_names) if bone_names else None
        self.trained_from_neural = origin == "trained" and model.kind == "neural"
        self.info = model.info()
        stats = getattr(model, "stats", None)
        self.stats = stats if stats else (self.info or {}).get("stats")
        self.exported_model = None
        self.plain_skinning = None
        self.preview_key = None

    def features(self, ck, rotations, curves):
        """The model's features for poses of its input bones: rotations (N, B, 4), curves (N, C)."""
        model = self.model
        spec = model.spec
        rotations = np.ascontiguousarray(rotations)
        c = None
        if spec.curve_count:
            c = np.ascontiguousarray(curves)
        if model.layout == "engine":
            return ck.pose_features(spec, rotations, c, layout="engine", rest_local=self.rest_local)
        return ck.pose_features(spec, rotations, c)


def _key(scene, mesh_name):
    """Sessions are per scene and per mesh of its setup (one model per mesh);
    no name means the setup's first mesh."""
    if mesh_name is None:
        settings = getattr(scene, "charkit", None)
        mesh = settings.mesh if settings is not None else None
        mesh_name = mesh.name if mesh is not None else ""
    return (scene.name_full, mesh_name)


def get(scene, mesh_name=None):
    key = _key(scene, mesh_name)
    s = _sessions.get(key)
    if s is None:
        s = _sessions[key] = Session()
    return s


def peek(scene, mesh_name=None):
    return _sessions.get(_key(scene, mesh_name))


def any_model(scene):
    """True when a mesh of the scene has a model in memory."""
    return any(k[0] == scene.name_full and se.model is not None for k, se in _sessions.items())


def clear_all():
    _sessions.clear()
