// The avatar view of the motion and live pages: a VRM chosen from the
// uploaded models, driven frame by frame by the retargeting solver
// (retarget.js) through three-vrm's normalized humanoid bones.
import { Vector3 } from "three";
import { api, fetchBytes } from "../api.js";
import { defaultAvatar, rigOf, solvePose } from "../retarget.js";
import { errorView, h, mount, toast } from "../ui.js";
import { Viewer } from "../viewer.js";

/** Bones whose rest pose the solver leaves alone: reset once when the avatar loads. */
const RESET = ["chest", "upperChest", "leftShoulder", "rightShoulder", "head"];

export class AvatarView {
  /** `debug` receives {id, name, dirs} where dirs holds the rendered arm bones' world directions. */
  constructor(initialId, debug, onChange) {
    this.debug = debug;
    this.onChange = onChange;
    this.stage = h("div", { class: "stage avatar-stage", "aria-label": "Avatar (drag to orbit)" });
    this.select = h("select", { "aria-label": "Avatar" }, h("option", { value: "" }, "No avatar"));
    this.element = h("div", { class: "avatar" }, this.stage, h("div", { class: "toolbar" },
      h("label", {}, "Avatar ", this.select)));
    this.viewer = null;
    this.rig = null;
    this.vrm = null;
    this.last = null;
    this.select.addEventListener("change", () => this.choose(this.select.value ? Number(this.select.value) : null));
    this.fill(initialId);
  }

  async fill(initialId) {
    let models = [];
    try {
      const page = await api("/api/models?limit=1000&state=done");
      models = page.items.filter((m) => m.vrmVersion);
    } catch (e) {
      toast(["Avatars: ", errorView(e)], "error");
    }
    for (const m of models)
      this.select.append(h("option", { value: String(m.id), selected: m.id === initialId },
        `${m.name || m.originalName} (VRM ${m.vrmVersion})`));
    if (!models.length) this.select.append(h("option", { disabled: true }, "no VRM model uploaded"));
    const start = initialId ?? defaultAvatar(models);
    if (start !== null) {
      this.select.value = String(start);
      await this.choose(start);
    } else {
      mount(this.stage, h("div", { class: "empty muted" }, "Upload a VRM model to see the motion on an avatar."));
    }
  }

  async choose(id) {
    this.onChange?.(id);
    this.vrm = null;
    this.rig = null;
    this.debug.avatar = { id, loaded: false, dirs: null };
    if (id === null) {
      this.viewer?.dispose();
      this.viewer = null;
      mount(this.stage, h("div", { class: "empty muted" }, "No avatar chosen."));
      return;
    }
    if (!this.viewer) {
      mount(this.stage);
      this.viewer = new Viewer(this.stage);
    }
    try {
      const rec = await api(`/api/models/${id}`);
      await this.viewer.load(await fetchBytes(rec.contentUrl));
      this.vrm = this.viewer.vrm;
      if (!this.vrm) throw new Error(`model ${id} is not a VRM`);
      for (const b of RESET) this.vrm.humanoid.getNormalizedBoneNode(b)?.quaternion.identity();
      this.rig = rigOf(this.vrm);
      this.debug.avatar = { id, name: rec.name || rec.originalName, loaded: true, dirs: null };
      if (this.last) this.pose(this.last);
    } catch (e) {
      toast(["Avatar: ", errorView(e)], "error");
    }
  }

  /** Poses the avatar with one keypoint frame. */
  pose(frame) {
    this.last = frame;
    if (!this.vrm) return;
    const { local } = solvePose(frame.points, this.rig);
    const humanoid = this.vrm.humanoid;
    for (const [bone, q] of Object.entries(local)) humanoid.getNormalizedBoneNode(bone)?.quaternion.copy(q);
    humanoid.update();
    this.vrm.scene.updateMatrixWorld(true);
    // What is drawn: the raw (rendered) arm bones' world directions.
    const dir = (from, to) => {
      const a = humanoid.getRawBoneNode(from)?.getWorldPosition(new Vector3());
      const b = humanoid.getRawBoneNode(to)?.getWorldPosition(new Vector3());
      return a && b ? b.sub(a).normalize().toArray() : null;
    };
    this.debug.avatar.frame = frame.frame;
    this.debug.avatar.dirs = { leftUpperArm: dir("leftUpperArm", "leftLowerArm"),
      rightUpperArm: dir("rightUpperArm", "rightLowerArm") };
  }

  dispose() {
    this.viewer?.dispose();
  }
}
