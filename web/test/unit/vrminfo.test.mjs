// The model page's node tree, expression order and licence words (web/src/vrminfo.js).
import assert from "node:assert/strict";
import { test } from "node:test";
import { licence, nodeTree, safeUrl, sortExpressions, vrm0GroupNames } from "../../src/vrminfo.js";

const flat = (items) => items.flatMap((n) => [n, ...flat(n.children)]);

test("the node tree follows the default scene, marks meshes, skins, bones and humanoid bones", () => {
  const json = {
    scene: 1,
    scenes: [{ nodes: [4] }, { nodes: [0, 3] }],
    nodes: [{ name: "Armature", children: [1] }, { name: "Hips", children: [2] }, { name: "Spine" },
      { name: "Body", mesh: 0, skin: 0 }, { name: "Camera", camera: 0 }],
    skins: [{ joints: [1, 2] }],
    extensions: { VRMC_vrm: { humanoid: { humanBones: { hips: { node: 1 }, spine: { node: 2 } } } } },
  };
  const t = nodeTree(json);
  assert.equal(t.count, 5);
  assert.deepEqual(t.roots.map((n) => n.name), ["Armature", "Body"]);
  assert.deepEqual(t.roots[0].children[0].marks, ["bone"]);
  assert.equal(t.roots[0].children[0].humanoid, "hips");
  assert.deepEqual(t.roots[1].marks, ["mesh", "skin"]);
  // Scene 0's node is not in the default scene: listed apart, with its mark.
  assert.deepEqual(t.detached.map((n) => [n.index, n.marks]), [[4, ["camera"]]]);
});

test("VRM 0.x humanoid bones mark their nodes too", () => {
  const t = nodeTree({ scenes: [{ nodes: [0] }], nodes: [{ name: "J" }],
    extensions: { VRM: { humanoid: { humanBones: [{ bone: "head", node: 0 }] } } } });
  assert.equal(t.roots[0].humanoid, "head");
});

test("a malformed hierarchy lists every node once and ends", () => {
  const json = {
    scenes: [{ nodes: [0, 0, 9] }],
    nodes: [{ children: [1, 1] }, { children: [0] }, { children: [3] }, { children: [2] }, {}],
  };
  const t = nodeTree(json);
  const all = [...flat(t.roots), ...flat(t.detached)].map((n) => n.index).sort();
  assert.deepEqual(all, [0, 1, 2, 3, 4]);
  assert.equal(t.roots.length, 1);
  assert.equal(t.roots[0].name, null, "unnamed nodes have no name");
  assert.equal(nodeTree({}).count, 0);
});

test("expressions: presets in the specification's order, then custom ones by name", () => {
  const names = ["blink", "smirk", "happy", "aa", "Cry", "neutral"];
  const presets = new Set(["blink", "happy", "aa", "neutral"]);
  assert.deepEqual(sortExpressions(names, (n) => presets.has(n)),
    { presets: ["happy", "aa", "blink", "neutral"], custom: ["Cry", "smirk"] });
});

test("VRM 0.x blend shape groups keep their names in the file", () => {
  const json = { extensions: { VRM: { blendShapeMaster: { blendShapeGroups: [
    { name: "Joy", presetName: "joy" }, { name: "Blink_L", presetName: "blink_l" }, { name: "Smirk", presetName: "unknown" }] } } } };
  assert.deepEqual([...vrm0GroupNames(json)], [["happy", "Joy"], ["blinkLeft", "Blink_L"], ["Smirk", "Smirk"]]);
  assert.equal(vrm0GroupNames({}).size, 0);
});

test("VRM 1.0 licence in words; absent fields read as the specification's defaults", () => {
  const l = licence({ metaVersion: "1", name: "Robot", authors: ["A", "B"], version: "2",
    licenseUrl: "https://vrm.dev/licenses/1.0/", commercialUsage: "personalNonProfit", allowRedistribution: true,
    modification: "allowModification", contactInformation: "https://example.org/me" });
  const row = Object.fromEntries(l.rows.map((r) => [r.field, r]));
  assert.equal(l.version, "VRM 1.0");
  assert.equal(row.commercialUsage.text, "personal non-profit only");
  assert.equal(row.allowRedistribution.text, "allowed");
  assert.equal(row.modification.text, "allowed, but modified versions may not be redistributed");
  assert.equal(row.licenseUrl.text, "VRM Public License 1.0");
  assert.equal(row.licenseUrl.url, "https://vrm.dev/licenses/1.0/");
  assert.equal(row.avatarPermission.stated, false);
  assert.equal(row.avatarPermission.text, "only the author");
  assert.match(row.avatarPermission.note, /default/);
  assert.equal(row.allowExcessivelyViolentUsage.text, "not allowed");
  assert.equal(row.creditNotation.text, "required");
  assert.equal(row.otherLicenseUrl.text, "not stated");
  assert.deepEqual(l.rows.map((r) => r.field), ["avatarPermission", "allowExcessivelyViolentUsage",
    "allowExcessivelySexualUsage", "commercialUsage", "allowPoliticalOrReligiousUsage", "allowAntisocialOrHateUsage",
    "creditNotation", "allowRedistribution", "modification", "licenseUrl", "otherLicenseUrl"]);
  assert.deepEqual(l.facts, [["Name", "Robot", null], ["Version", "2", null], ["Authors", "A, B", null],
    ["Contact", "https://example.org/me", "https://example.org/me"]]);
});

test("VRM 0.x licence in words; nothing is assumed for absent fields", () => {
  const l = licence({ metaVersion: "0", title: "Sphere", author: "X", allowedUserName: "ExplicitlyLicensedPerson",
    violentUssageName: "Disallow", commercialUssageName: "Allow", licenseName: "CC_BY_NC", otherLicenseUrl: "",
    sexualUssageName: "Sometimes" });
  const row = Object.fromEntries(l.rows.map((r) => [r.field, r]));
  assert.equal(l.version, "VRM 0.x");
  assert.equal(row.allowedUserName.text, "only people the author has explicitly licensed");
  assert.equal(row.violentUssageName.text, "not allowed");
  assert.equal(row.commercialUssageName.text, "allowed");
  assert.match(row.licenseName.text, /^CC BY-NC: .*no commercial use/);
  assert.equal(row.otherLicenseUrl.text, "none");
  assert.equal(row.otherPermissionUrl.text, "not stated");
  assert.equal(row.sexualUssageName.text, "an unknown value, “Sometimes”");
  assert.equal(licence(null), null);
});

test("only http(s) URLs become links", () => {
  assert.equal(safeUrl("https://vrm.dev/licenses/1.0/"), "https://vrm.dev/licenses/1.0/");
  assert.equal(safeUrl("javascript:alert(1)"), null);
  assert.equal(safeUrl("mailto:a@b.c"), null);
  assert.equal(safeUrl("see https://x.org"), null);
  assert.equal(safeUrl(42), null);
});
