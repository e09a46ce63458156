"""scene.charkit: the add-on's settings (a PropertyGroup per scene)."""

import bpy
from bpy.props import (BoolProperty, CollectionProperty, EnumProperty, FloatProperty, FloatVectorProperty,
                       IntProperty, PointerProperty, StringProperty)


def _poll_armature(_self, obj):
    return obj.type == 'ARMATURE'


def _poll_mesh(_self, obj):
    return obj.type == 'MESH'


class CHARKIT_PG_bone(bpy.types.PropertyGroup):
    """An input bone: which axes turn and over which range training samples them."""
    # `name` is PropertyGroup's own StringProperty: the bone's name.
    use: BoolProperty(name="Use", default=True, description="Drive the deformer with this bone")
    axis_x: BoolProperty(name="X", default=True, description="Sample rotations about X")
    axis_y: BoolProperty(name="Y", default=True, description="Sample rotations about Y")
    axis_z: BoolProperty(name="Z", default=True, description="Sample rotations about Z")
    min_deg: FloatProperty(name="Min", default=-45.0, min=-360.0, max=360.0,
                           description="Smallest training angle of each enabled axis (degrees)")
    max_deg: FloatProperty(name="Max", default=45.0, min=-360.0, max=360.0,
                           description="Largest training angle of each enabled axis (degrees)")
    per_axis: BoolProperty(name="Per Axis", default=False,
                           description="A range of its own for each axis (else Min and Max for all)")
    axis_min: FloatVectorProperty(name="Min", size=3, default=(-45.0, -45.0, -45.0), min=-360.0,
                                  max=360.0, description="Smallest training angle about X, Y, Z (degrees)")
    axis_max: FloatVectorProperty(name="Max", size=3, default=(45.0, 45.0, 45.0), min=-360.0,
                                  max=360.0, description="Largest training angle about X, Y, Z (degrees)")


class CHARKIT_PG_curve(bpy.types.PropertyGroup):
    """A shape key of the mesh used as a curve input (its value feeds the model)."""
    use: BoolProperty(name="Use", default=False, description="Use this shape key's value as an input")
    min: FloatProperty(name="Min", default=0.0, description="Smallest training value")
    max: FloatProperty(name="Max", default=1.0, description="Largest training value")


class CHARKIT_PG_morph(bpy.types.PropertyGroup):
    """A shape key of the mesh offered as a morph target (basis of a neural model)."""
    use: BoolProperty(name="Use", default=False,
                      description="Use this shape key as a morph target of neural models and imported networks")


class CHARKIT_PG_mesh(bpy.types.PropertyGroup):
    """One more mesh the setup corrects (its own model, trained and previewed with the others)."""
    object: PointerProperty(name="Mesh", type=bpy.types.Object, poll=_poll_mesh,
                            description="A mesh skinned to the same armature")


class CHARKIT_PG_settings(bpy.types.PropertyGroup):
    # Setup
    armature: PointerProperty(name="Armature", type=bpy.types.Object, poll=_poll_armature,
                              description="The armature whose bones drive the deformer")
    mesh: PointerProperty(name="Mesh", type=bpy.types.Object, poll=_poll_mesh,
                          description="The skinned mesh to correct (More Meshes adds others, "
                          "one model each, driven by the same inputs)")
    more_meshes: CollectionProperty(type=CHARKIT_PG_mesh)
    more_meshes_index: IntProperty(default=0)
    model_type: EnumProperty(
        name="Pose Model", default='NEURAL',
        items=[('LINEAR', "Linear", "Ridge regression in closed form: fast, exact at the rest pose; "
                "learns the bind-space correction and previews on top of the skinned pose"),
               ('LINEAR_REST', "Linear (Rest)", "Ridge regression of the whole deformation from the "
                "rest pose (the Blender pose-deformer description's model); previews on the rest "
                "pose with no armature"),
               ('NEURAL', "Neural", "An MLP predicting morph weights; learns the bind-space correction "
                "and previews on top of the skinned pose")])

    # Inputs
    bones: CollectionProperty(type=CHARKIT_PG_bone)
    bones_index: IntProperty(default=0)
    curves: CollectionProperty(type=CHARKIT_PG_curve)
    curves_index: IntProperty(default=0)
    morphs: CollectionProperty(type=CHARKIT_PG_morph)
    morphs_index: IntProperty(default=0)

    # Training data
    pose_source: EnumProperty(
        name="Poses", default='RANDOM',
        items=[('RANDOM', "Random", "The rest pose and seeded random poses within each bone's range"),
               ('ACTION', "Action", "The rest pose and frames of an action, evenly spaced")])
    random_count: IntProperty(name="Poses", default=50, min=1, max=100000,
                              description="Random poses (the rest pose comes on top)")
    random_seed: IntProperty(name="Seed", default=777, min=0, description="Seed of charkit's pose sampler")
    action: PointerProperty(name="Action", type=bpy.types.Action,
                            description="The action whose frames give the training poses")
    action_start: IntProperty(name="Start", default=1, description="First frame sampled")
    action_end: IntProperty(name="End", default=100, description="Last frame sampled")
    action_frames: IntProperty(name="Frames", default=20, min=1, max=100000,
                               description="Frames taken, evenly spaced from Start to End, both included")
    bake_to_timeline: BoolProperty(name="Bake Poses To Timeline", default=True,
                                   description="Keyframe the training poses on the input bones, one per "
                                   "frame from Start Frame, in an action of their own "
                                   "(<armature>_charkit_poses); the armature's action is left alone")
    timeline_start: IntProperty(name="Start Frame", default=1,
                                description="Frame of the rest pose; pose i is keyed at Start Frame + i")

    # Model
    ridge_lambda: FloatProperty(name="Lambda", default=1e-3, min=0.0, precision=6,
                                description="Ridge regularisation of the linear model")
    hidden: StringProperty(name="Hidden Layers", default="128,128",
                           description="Widths of the hidden layers, comma-separated")
    learning_rate: FloatProperty(name="Learning Rate", default=1e-3, min=1e-7, max=1.0, precision=5)
    weight_decay: FloatProperty(name="Weight Decay", default=1.0, min=0.0, max=100.0, precision=3,
                                description="Decoupled weight decay (AdamW): shrinks the network's "
                                "weights every step so that it does not overfit the training poses "
                                "(0: none)")
    iterations: IntProperty(name="Iterations", default=1000, min=1, max=10000000,
                            description="Adam steps; with Early Stopping, the most it may take")
    validation: FloatProperty(name="Early Stopping", default=0.0, min=0.0, max=0.9, precision=2,
                              subtype='FACTOR',
                              description="Share of the training poses set aside to choose when "
                              "training stops (it stops when their error has not fallen for "
                              "Patience checks); the network is then trained on all training poses "
                              "for that many steps. 0: no early stopping")
    patience: IntProperty(name="Patience", default=10, min=1, max=100000,
                          description="Checks (one every 50 steps) without a lower error on the "
                          "early-stopping poses before training stops")
    batch_size: IntProperty(name="Batch Size", default=128, min=1, max=1000000)
    standardize: BoolProperty(name="Standardise Inputs", default=True,
                              description="Scale each input to zero mean and unit variance")
    clamp: EnumProperty(
        name="Weight Clamp", default='TRAINING_RANGE',
        items=[('NONE', "None", "Predicted weights as they come"),
               ('UNIT', "Unit", "Clamp predicted weights to [0, 1]"),
               ('TRAINING_RANGE', "Training Range", "Clamp each weight to its range over the training poses")])
    train_seed: IntProperty(name="Seed", default=777, min=0, description="Seed of the network's initialisation")

    # Preview & IO
    auto_refresh: BoolProperty(name="Auto Refresh", default=True,
                               description="Update the preview proxy whenever the pose or frame changes")
    model_path: StringProperty(name="Pose Model File", subtype='FILE_PATH', default="//pose_model.json",
                               description="charkit model: NAME.json (+ NAME.npz beside it)")
    pose_library_path: StringProperty(name="Pose Library", subtype='FILE_PATH',
                                      default="//charkit_poses.json",
                                      description="Where Bake Shape Keys writes the pose library JSON")

    # Engine bridge
    network_path: StringProperty(name="Network", subtype='FILE_PATH', default="",
                                 description="An engine network to import: .nmn (global mode) or .onnx")
    clamp_imported: BoolProperty(name="Clamp Imported Weights", default=True,
                                 description="Clamp the imported weights of morph targets to [0, 1] (learned-basis coefficients, as charkit's own .nmn export records them, are never clamped)")
    nmn_path: StringProperty(name="NMN File", subtype='FILE_PATH', default="//MLD_Deformer.nmn",
                             description="NAME.nmn (+ NAME.bmd_ue.json and NAME.morphs.npz beside it)")
    nmn_morphs: IntProperty(name="Basis Size", default=32, min=1, max=4096,
                            description="Morphs of the learned basis (the mean delta comes on top), "
                            "which the Neural network's outputs weigh; capped at poses - 1. Export "
                            ".nmn uses it too when it has to retrain")


classes = (CHARKIT_PG_bone, CHARKIT_PG_curve, CHARKIT_PG_morph, CHARKIT_PG_mesh, CHARKIT_PG_settings)


def register():
    for c in classes:
        bpy.utils.register_class(c)
    bpy.types.Scene.charkit = PointerProperty(type=CHARKIT_PG_settings)


def unregister():
    del bpy.types.Scene.charkit
    for c in reversed(classes):
        bpy.utils.unregister_class(c)
