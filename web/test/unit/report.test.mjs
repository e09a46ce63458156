// Grouping and filtering of validation reports (web/src/report.js), on a
// report shaped like `charkit bem validate --json`'s issues.
import assert from "node:assert/strict";
import { test } from "node:test";
import { countIssues, filterIssues, groupIssues, locationOf } from "../../src/report.js";

const messages = [
  { code: "W_ONE", severity: 1, severityName: "warning", section: "4.2", pointer: "/meshes/0", message: "first warning" },
  { code: "E_TWO", severity: 0, severityName: "error", section: "3.1", member: "mesh.bin", offset: 16, message: "an error" },
  { code: "W_ONE", severity: 1, severityName: "warning", section: "4.2", pointer: "/meshes/3", message: "second warning" },
  { code: "I_NOTE", severity: 2, section: "", message: "a note" },
  { code: "E_THREE", severity: 0, severityName: "error", section: "5", message: "another error" },
];

test("groups by severity (errors first), then by code in order of appearance", () => {
  const groups = groupIssues(messages);
  assert.deepEqual(groups.map((g) => [g.severity, g.count]), [["error", 2], ["warning", 2], ["info", 1]]);
  assert.deepEqual(groups[0].codes.map((c) => c.code), ["E_TWO", "E_THREE"]);
  assert.deepEqual(groups[1].codes.map((c) => [c.code, c.section, c.items.length]), [["W_ONE", "4.2", 2]]);
  assert.deepEqual(groups[1].codes[0].items.map((m) => m.message), ["first warning", "second warning"]);
});

test("severity falls back to the number when the name is missing", () => {
  assert.deepEqual(countIssues(messages), { error: 2, warning: 2, info: 1 });
  assert.equal(groupIssues([{ code: "X", severity: 0 }])[0].severity, "error");
});

test("locations join member, pointer and byte offset", () => {
  assert.equal(locationOf(messages[1]), "mesh.bin · byte 16");
  assert.equal(locationOf(messages[0]), "/meshes/0");
  assert.equal(locationOf(messages[3]), "");
  assert.equal(locationOf({ offset: 0 }), "byte 0", "offset 0 is a location");
});

test("filters by severity and by text in code, message or location", () => {
  assert.equal(filterIssues(messages, { shown: new Set(["error"]) }).length, 2);
  assert.deepEqual(filterIssues(messages, { text: "meshes/3" }).map((m) => m.message), ["second warning"]);
  assert.deepEqual(filterIssues(messages, { text: "e_two" }).map((m) => m.code), ["E_TWO"]);
  assert.equal(filterIssues(messages, { text: "nothing like this" }).length, 0);
  assert.equal(filterIssues(messages, { text: "  " }).length, 5);
  assert.equal(groupIssues([]).length, 0);
});
