// What the model page's inspection tabs say about a glTF/VRM, worked out
// from the file's JSON and three-vrm's meta: the node tree with its marks,
// the VRM expressions in a stable order, and the VRM licence in plain words
// (VRM 1.0 meta, VRM 0.x meta). No DOM and no three.js here, so
// test/unit/vrminfo.test.mjs runs it in node.

/** The VRM 1.0 expression presets, in the order the specification lists them. */
export const expressionPresets = ["happy", "angry", "sad", "relaxed", "surprised", "aa", "ih", "ou", "ee", "oh",
  "blink", "blinkLeft", "blinkRight", "lookUp", "lookDown", "lookLeft", "lookRight", "neutral"];

/** VRM 0.x blend shape group presets → the VRM 1.0 names three-vrm gives them. */
export const vrm0Presets = { joy: "happy", angry: "angry", sorrow: "sad", fun: "relaxed", a: "aa", i: "ih", u: "ou",
  e: "ee", o: "oh", blink: "blink", blink_l: "blinkLeft", blink_r: "blinkRight", lookup: "lookUp",
  lookdown: "lookDown", lookleft: "lookLeft", lookright: "lookRight", neutral: "neutral" };

/**
 * The VRM 0.x file's own group name for each expression three-vrm made of
 * it ("happy" → "Joy"): a VRM 0.x blend shape group is known by that name
 * in the tools that made it. Empty for VRM 1.0.
 */
export function vrm0GroupNames(json) {
  const out = new Map();
  for (const g of json?.extensions?.VRM?.blendShapeMaster?.blendShapeGroups ?? []) {
    const name = vrm0Presets[g.presetName] ?? g.name;
    if (name != null && !out.has(name) && g.name != null) out.set(name, g.name);
  }
  return out;
}

/** Expression names sorted: presets in specification order, then custom ones by name. */
export function sortExpressions(names, isPreset) {
  const rank = (n) => (isPreset(n) ? expressionPresets.indexOf(n) : -1);
  const presets = names.filter(isPreset).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  const custom = names.filter((n) => !isPreset(n)).sort((a, b) => a.localeCompare(b));
  return { presets, custom };
}

/** The humanoid bone each node is, from VRM 1.0's or VRM 0.x's humanoid. */
function humanoidByNode(json) {
  const out = new Map();
  const v1 = json?.extensions?.VRMC_vrm?.humanoid?.humanBones;
  if (v1) for (const [bone, b] of Object.entries(v1)) if (Number.isInteger(b?.node)) out.set(b.node, bone);
  for (const b of json?.extensions?.VRM?.humanoid?.humanBones ?? [])
    if (Number.isInteger(b?.node) && b.bone) out.set(b.node, b.bone);
  return out;
}

/**
 * The glTF's node hierarchy: `roots` (the default scene's root nodes, each
 * `{index, name, marks, children}`), `detached` (nodes no scene reaches,
 * as trees of their own) and `count` (every node of the file, each listed
 * once even in a malformed file whose children repeat or loop).
 * Marks: "mesh", "skin", "bone" (a joint of some skin), "camera", and the
 * VRM humanoid bone the node is.
 */
export function nodeTree(json) {
  const nodes = json?.nodes ?? [];
  const joints = new Set((json?.skins ?? []).flatMap((s) => s.joints ?? []));
  const humanoid = humanoidByNode(json);
  const seen = new Set();
  const item = (i) => {
    seen.add(i);
    const n = nodes[i] ?? {};
    const marks = [];
    if (n.mesh !== undefined) marks.push("mesh");
    if (n.skin !== undefined) marks.push("skin");
    if (joints.has(i)) marks.push("bone");
    if (n.camera !== undefined) marks.push("camera");
    const children = [];
    for (const c of n.children ?? []) {
      if (!Number.isInteger(c) || c < 0 || c >= nodes.length || seen.has(c)) continue;
      seen.add(c);
      children.push(c);
    }
    return { index: i, name: typeof n.name === "string" && n.name ? n.name : null, marks,
      humanoid: humanoid.get(i) ?? null, children: children.map(item) };
  };
  const scene = json?.scenes?.[json.scene ?? 0];
  const rootIndices = (scene?.nodes ?? []).filter((i) => Number.isInteger(i) && i >= 0 && i < nodes.length);
  const roots = [];
  for (const i of rootIndices) if (!seen.has(i)) roots.push(item(i));
  // What the scene does not reach: parents first (a node no other node lists as a child).
  const child = new Set(nodes.flatMap((n) => n?.children ?? []));
  const detached = [];
  for (const pass of [(i) => !child.has(i), () => true])
    for (let i = 0; i < nodes.length; i++) if (!seen.has(i) && pass(i)) detached.push(item(i));
  return { roots, detached, count: nodes.length };
}

const allowed = (v) => (v ? "allowed" : "not allowed");
const vrm0Allow = { Allow: "allowed", Disallow: "not allowed" };

// [field, label, words (a map of the values the specification defines, or a
// function), the specification's default when the field is absent].
const vrm1Fields = [
  ["avatarPermission", "Who may use the avatar", { onlyAuthor: "only the author",
    onlySeparatelyLicensedPerson: "only people the author has licensed separately", everyone: "everyone" }, "onlyAuthor"],
  ["allowExcessivelyViolentUsage", "Excessively violent use", allowed, false],
  ["allowExcessivelySexualUsage", "Excessively sexual use", allowed, false],
  ["commercialUsage", "Commercial use", { personalNonProfit: "personal non-profit only",
    personalProfit: "personal use, for profit too (not by companies)", corporation: "allowed, by companies too" },
  "personalNonProfit"],
  ["allowPoliticalOrReligiousUsage", "Political or religious use", allowed, false],
  ["allowAntisocialOrHateUsage", "Antisocial or hateful use", allowed, false],
  ["creditNotation", "Credit", { required: "required", unnecessary: "not required" }, "required"],
  ["allowRedistribution", "Redistribution", allowed, false],
  ["modification", "Modification", { prohibited: "not allowed",
    allowModification: "allowed, but modified versions may not be redistributed",
    allowModificationRedistribution: "allowed, and modified versions may be redistributed" }, "prohibited"],
  ["licenseUrl", "Licence", "url"],
  ["otherLicenseUrl", "Other licence", "url"],
];

const vrm0Fields = [
  ["allowedUserName", "Who may use the avatar", { OnlyAuthor: "only the author",
    ExplicitlyLicensedPerson: "only people the author has explicitly licensed", Everyone: "everyone" }],
  ["violentUssageName", "Violent acts", vrm0Allow],
  ["sexualUssageName", "Sexual acts", vrm0Allow],
  ["commercialUssageName", "Commercial use", vrm0Allow],
  ["licenseName", "Licence (redistribution, modification)", {
    Redistribution_Prohibited: "redistribution prohibited",
    CC0: "CC0: no rights reserved",
    CC_BY: "CC BY: credit required",
    CC_BY_NC: "CC BY-NC: credit required, no commercial use",
    CC_BY_SA: "CC BY-SA: credit required, changes under the same licence",
    CC_BY_NC_SA: "CC BY-NC-SA: credit required, no commercial use, changes under the same licence",
    CC_BY_ND: "CC BY-ND: credit required, no modified versions",
    CC_BY_NC_ND: "CC BY-NC-ND: credit required, no commercial use, no modified versions",
    Other: "another licence (see “Other licence”)" }],
  ["otherPermissionUrl", "Other permissions", "url"],
  ["otherLicenseUrl", "Other licence", "url"],
];

/** The well-known licence documents a VRM 1.0 licenseUrl names. */
const licenceNames = { "https://vrm.dev/licenses/1.0/": "VRM Public License 1.0",
  "https://vrm.dev/licenses/1.0": "VRM Public License 1.0" };

/** A URL people may follow: http(s) only, else null. */
export function safeUrl(v) {
  return typeof v === "string" && /^https?:\/\/[^\s]+$/i.test(v.trim()) ? v.trim() : null;
}

function row([field, label, words, dflt], meta, version) {
  const stated = meta[field] !== undefined && meta[field] !== null;
  const value = stated ? meta[field] : undefined;
  const r = { field, label, value, stated, text: "", url: null, note: null };
  if (words === "url") {
    if (!stated || value === "") r.text = stated ? "none" : "not stated";
    else {
      r.url = safeUrl(value);
      r.text = licenceNames[value] ?? String(value);
    }
    return r;
  }
  const say = (v) => (typeof words === "function" ? words(v) : words[v]);
  if (stated) r.text = say(value) ?? `an unknown value, “${String(value)}”`;
  else if (dflt !== undefined) {
    r.text = say(dflt);
    r.note = `not stated: ${version}'s default`;
  } else r.text = "not stated";
  return r;
}

/**
 * The licence of a VRM as three-vrm reads its meta (metaVersion "1" or
 * "0"): `{version, rows, facts}`. Each row `{field, label, value, stated,
 * text, url, note}` holds the field's raw value and the words for people;
 * a VRM 1.0 field that is absent reads as the specification's default, with
 * a note saying so. `facts` are [label, text, url] of the model's name,
 * version, authors, contact and references.
 */
export function licence(meta) {
  if (!meta) return null;
  const v0 = meta.metaVersion === "0";
  const version = v0 ? "VRM 0.x" : "VRM 1.0";
  const rows = (v0 ? vrm0Fields : vrm1Fields).map((f) => row(f, meta, version));
  const list = (v) => (Array.isArray(v) ? v.filter(Boolean).join(", ") : v);
  const fact = (label, v) => {
    const text = list(v);
    return text ? [label, String(text), safeUrl(text)] : null;
  };
  const facts = (v0
    ? [fact("Title", meta.title), fact("Version", meta.version), fact("Author", meta.author),
      fact("Contact", meta.contactInformation), fact("Reference", meta.reference)]
    : [fact("Name", meta.name), fact("Version", meta.version), fact("Authors", meta.authors),
      fact("Copyright", meta.copyrightInformation), fact("Contact", meta.contactInformation),
      fact("References", meta.references), fact("Third-party licences", meta.thirdPartyLicenses)]).filter(Boolean);
  return { version, rows, facts };
}
