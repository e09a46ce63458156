// The 3D view of the model page: a three.js scene with orbit controls that
// loads a GLB/glTF/VRM (VRM 0.x and 1.0 through three-vrm), frames it, and
// offers skeleton and wireframe toggles. Also used by the motion page for
// the avatar (the VRM's normalized humanoid bones are driven from outside).
import * as THREE from "three";
import { OrbitControls } from "three/examples/jsm/controls/OrbitControls.js";
import { GLTFLoader } from "three/examples/jsm/loaders/GLTFLoader.js";
import { VRMLoaderPlugin, VRMUtils } from "@pixiv/three-vrm";

export class Viewer {
  constructor(container) {
    this.container = container;
    // Transparent: the stage's CSS background (light or dark theme) shows through.
    this.renderer = new THREE.WebGLRenderer({ antialias: true, alpha: true, preserveDrawingBuffer: true });
    this.renderer.setClearColor(0x000000, 0);
    this.renderer.setPixelRatio(Math.min(window.devicePixelRatio, 2));
    this.renderer.outputColorSpace = THREE.SRGBColorSpace;
    container.append(this.renderer.domElement);
    this.scene = new THREE.Scene();
    this.camera = new THREE.PerspectiveCamera(35, 1, 0.01, 1000);
    this.camera.position.set(0, 1.4, 3);
    this.controls = new OrbitControls(this.camera, this.renderer.domElement);
    this.controls.enableDamping = true;
    this.scene.add(new THREE.HemisphereLight(0xffffff, 0x445566, 2.2));
    const sun = new THREE.DirectionalLight(0xffffff, 2.0);
    sun.position.set(1, 2, 3);
    this.scene.add(sun);
    this.grid = new THREE.GridHelper(10, 20, 0x888888, 0x444444);
    this.grid.material.transparent = true;
    this.grid.material.opacity = 0.35;
    this.scene.add(this.grid);
    this.root = null;
    this.vrm = null;
    this.skeleton = null;
    this.marker = null;  // the highlight's box (highlight())
    this.highlighted = null;
    this.frames = 0;
    this.onFrame = null;  // called each animation frame with dt (s)
    this.timer = new THREE.Timer();
    this.resize = () => {
      const w = Math.max(1, container.clientWidth);
      const hgt = Math.max(1, container.clientHeight);
      this.renderer.setSize(w, hgt, false);
      this.camera.aspect = w / hgt;
      this.camera.updateProjectionMatrix();
    };
    this.observer = new ResizeObserver(this.resize);
    this.observer.observe(container);
    this.resize();
    this.running = true;
    const tick = () => {
      if (!this.running) return;
      this.timer.update();
      const dt = this.timer.getDelta();
      this.onFrame?.(dt);
      this.vrm?.update(dt);
      this.controls.update();
      this.renderer.render(this.scene, this.camera);
      this.frames++;
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  }

  /**
   * Loads a GLB/glTF/VRM from bytes; resolves to the scene facts (stats()).
   * `frame: false` keeps the camera where the user left it (a new selection
   * of the same package) instead of framing the new model.
   */
  async load(buffer, { frame = true } = {}) {
    const loader = new GLTFLoader();
    loader.register((parser) => new VRMLoaderPlugin(parser));
    const gltf = await loader.parseAsync(buffer, "");
    const vrm = gltf.userData.vrm ?? null;
    if (vrm) {
      VRMUtils.removeUnnecessaryVertices(gltf.scene);
      VRMUtils.combineSkeletons(gltf.scene);
      VRMUtils.rotateVRM0(vrm);  // VRM 0.x faces -Z: turn it to face the camera like 1.0
      vrm.scene.traverse((o) => (o.frustumCulled = false));
    }
    this.clear();
    this.root = vrm ? vrm.scene : gltf.scene;
    this.vrm = vrm;
    this.gltf = gltf;
    this.scene.add(this.root);
    if (frame) this.frame();
    return this.stats();
  }

  /**
   * Sets the loaded glTF's morph target weights: `morphs[m]` holds glTF mesh
   * m's weights in target order (every primitive of the mesh, every node that
   * uses it). Returns the number of primitives set.
   */
  setMorphWeights(morphs) {
    const assoc = this.gltf?.parser?.associations;
    let n = 0;
    this.root?.traverse((o) => {
      if (!o.isMesh || !o.morphTargetInfluences) return;
      const w = morphs[assoc?.get(o)?.meshes];
      if (!w) return;
      for (let i = 0; i < o.morphTargetInfluences.length && i < w.length; i++) o.morphTargetInfluences[i] = w[i];
      n++;
    });
    return n;
  }

  /**
   * The objects of the loaded glTF's nodes: node index → Object3D, for the
   * nodes the shown scene holds (GLTFLoader's associations).
   */
  nodeObjects() {
    const assoc = this.gltf?.parser?.associations;
    const out = new Map();
    this.root?.traverse((o) => {
      const i = assoc?.get(o)?.nodes;
      if (i !== undefined && !out.has(i)) out.set(i, o);
    });
    return out;
  }

  /**
   * Outlines `object` (a box around it and everything under it, drawn over
   * the model), or nothing when `object` is null. A node with no geometry
   * under it (a bone, an empty) gets a small box at its origin.
   */
  highlight(object) {
    if (this.marker) {
      this.scene.remove(this.marker);
      this.marker.geometry.dispose();
      this.marker.material.dispose();
    }
    this.marker = null;
    this.highlighted = object ?? null;
    if (!object || !this.root) return;
    this.root.updateMatrixWorld(true);
    const box = new THREE.Box3().setFromObject(object, true);
    if (box.isEmpty()) {
      const all = new THREE.Box3().setFromObject(this.root, true);
      const size = all.isEmpty() ? 0.05 : all.getSize(new THREE.Vector3()).length() * 0.02;
      box.setFromCenterAndSize(object.getWorldPosition(new THREE.Vector3()), new THREE.Vector3(size, size, size));
    }
    this.marker = new THREE.Box3Helper(box, 0xffa000);
    this.marker.material.depthTest = false;
    this.marker.material.transparent = true;
    this.marker.renderOrder = 10;
    this.scene.add(this.marker);
  }

  /** The outlined node: {index, name (the file's), size (the box's diagonal)}, or null. */
  highlightedNode() {
    if (!this.highlighted || !this.marker) return null;
    const index = this.gltf?.parser?.associations?.get(this.highlighted)?.nodes ?? null;
    return { index, name: this.gltf?.parser?.json?.nodes?.[index]?.name ?? null,
      size: this.marker.box.getSize(new THREE.Vector3()).length() };
  }

  /** Each glTF mesh's morph target weights (its first primitive's): {meshIndex: [w…]}. */
  morphsByMesh() {
    const assoc = this.gltf?.parser?.associations;
    const out = {};
    this.root?.traverse((o) => {
      const m = assoc?.get(o)?.meshes;
      if (m !== undefined && o.isMesh && o.morphTargetInfluences && !(m in out)) out[m] = [...o.morphTargetInfluences];
    });
    return out;
  }

  /** The first primitive's morph target weights (what the page's test reads). */
  morphWeights() {
    let out = null;
    this.root?.traverse((o) => {
      if (!out && o.isMesh && o.morphTargetInfluences?.length) out = [...o.morphTargetInfluences];
    });
    return out ?? [];
  }

  /** Removes the model. */
  clear() {
    this.highlight(null);
    if (this.skeleton) this.scene.remove(this.skeleton);
    this.skeleton = null;
    if (this.root) this.scene.remove(this.root);
    if (this.vrm) VRMUtils.deepDispose(this.vrm.scene);
    this.root = null;
    this.vrm = null;
  }

  /** Points the camera at the model's bounding box, whole model in view. */
  frame() {
    if (!this.root) return;
    this.root.updateMatrixWorld(true);
    const box = new THREE.Box3().setFromObject(this.root, true);
    if (box.isEmpty()) return;
    const size = box.getSize(new THREE.Vector3());
    const center = box.getCenter(new THREE.Vector3());
    const radius = Math.max(size.length() / 2, 1e-3);
    const fov = THREE.MathUtils.degToRad(this.camera.fov);
    const distance = (radius / Math.sin(fov / 2)) * 1.05;
    this.camera.near = distance / 100;
    this.camera.far = distance * 100;
    this.camera.position.copy(center).add(new THREE.Vector3(0, size.y * 0.1, distance));
    this.camera.updateProjectionMatrix();
    this.controls.target.copy(center);
    this.controls.update();
    this.grid.position.y = box.min.y;
    this.grid.scale.setScalar(Math.max(radius, 0.5) / 2);
  }

  setSkeleton(on) {
    if (on && !this.skeleton && this.root) {
      this.skeleton = new THREE.SkeletonHelper(this.root);
      this.skeleton.material.depthTest = false;
      this.scene.add(this.skeleton);
    } else if (!on && this.skeleton) {
      this.scene.remove(this.skeleton);
      this.skeleton = null;
    }
  }

  setWireframe(on) {
    this.root?.traverse((o) => {
      if (!o.isMesh) return;
      for (const m of Array.isArray(o.material) ? o.material : [o.material]) if (m) m.wireframe = on;
    });
  }

  /** What the loaded scene holds, counted the way the side panel shows it. */
  stats() {
    const s = { meshes: 0, primitives: 0, triangles: 0, materials: new Set(), textures: new Set(),
      morphTargets: 0, skins: new Set(), joints: new Set() };
    this.root?.traverse((o) => {
      if (!o.isMesh) return;
      s.primitives++;
      const g = o.geometry;
      const n = g.index ? g.index.count : g.attributes.position?.count ?? 0;
      s.triangles += Math.floor(n / 3);
      for (const m of Array.isArray(o.material) ? o.material : [o.material]) {
        if (!m) continue;
        s.materials.add(m.uuid);
        for (const v of Object.values(m)) if (v?.isTexture) s.textures.add(v.uuid);
        if (m.uniforms) for (const u of Object.values(m.uniforms)) if (u?.value?.isTexture) s.textures.add(u.value.uuid);
      }
      s.morphTargets += Object.keys(o.morphTargetDictionary ?? {}).length;
      if (o.isSkinnedMesh) {
        s.skins.add(o.skeleton.uuid);
        for (const b of o.skeleton.bones) s.joints.add(b.uuid);
      }
    });
    const json = this.gltf?.parser?.json ?? {};
    return {
      meshes: json.meshes?.length ?? 0,
      primitives: s.primitives,
      triangles: s.triangles,
      materials: json.materials?.length ?? s.materials.size,
      textures: json.textures?.length ?? s.textures.size,
      morphTargets: s.morphTargets,
      skins: json.skins?.length ?? s.skins.size,
      // The nodes the file's skins name: three-vrm may rebuild skeletons,
      // so the scene's bones undercount them.
      joints: json.skins ? new Set(json.skins.flatMap((k) => k.joints ?? [])).size : s.joints.size,
      vrm: this.vrm ? vrmFacts(this.vrm) : null,
    };
  }

  dispose() {
    this.running = false;
    this.observer.disconnect();
    this.clear();
    this.controls.dispose();
    this.renderer.dispose();
    this.renderer.domElement.remove();
  }
}

/** The VRM humanoid bones the VRM 1.0 specification requires. */
export const requiredBones = ["hips", "spine", "head", "leftUpperArm", "leftLowerArm", "leftHand",
  "rightUpperArm", "rightLowerArm", "rightHand", "leftUpperLeg", "leftLowerLeg", "leftFoot",
  "rightUpperLeg", "rightLowerLeg", "rightFoot"];

function vrmFacts(vrm) {
  const meta = vrm.meta ?? {};
  const v0 = meta.metaVersion === "0";
  const bones = Object.keys(vrm.humanoid?.humanBones ?? {}).filter((b) => vrm.humanoid.getRawBoneNode(b));
  return {
    version: v0 ? "0.x" : "1.0",
    title: v0 ? meta.title : meta.name,
    author: v0 ? meta.author : (meta.authors ?? []).join(", "),
    licence: v0 ? meta.licenseName : meta.licenseUrl,
    bones,
    missing: requiredBones.filter((b) => !bones.includes(b)),
    expressions: Object.keys(vrm.expressionManager?.expressionMap ?? {}).length,
  };
}
