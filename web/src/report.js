// The package validation report as the console shows it: issues grouped by
// severity, then by code (docs/console.md §Package page). Pure: unit-tested
// in web/test/unit/report.test.mjs.

export const severities = ["error", "warning", "info"];

/** The severity name of a report message ("severityName", else from "severity" 0–2). */
export function severityOf(m) {
  if (typeof m.severityName === "string" && severities.includes(m.severityName)) return m.severityName;
  return severities[m.severity] ?? "info";
}

/** Where a message points: archive member, JSON pointer, byte offset (joined by " · "). */
export function locationOf(m) {
  const parts = [];
  if (m.member) parts.push(m.member);
  if (m.pointer) parts.push(m.pointer);
  if (m.offset !== undefined && m.offset !== null) parts.push(`byte ${m.offset}`);
  return parts.join(" · ");
}

/**
 * Keeps the messages whose severity is in `shown` (a Set of names) and whose
 * code, message or location contains `text` (case-insensitive).
 */
export function filterIssues(messages, { text = "", shown = new Set(severities) } = {}) {
  const needle = text.trim().toLowerCase();
  return messages.filter((m) => {
    if (!shown.has(severityOf(m))) return false;
    if (!needle) return true;
    return [m.code, m.message, locationOf(m), m.section].some((s) =>
      String(s ?? "").toLowerCase().includes(needle));
  });
}

/**
 * Groups messages: [{severity, count, codes: [{code, section, items}]}],
 * severities in the order error, warning, info (empty ones left out), codes
 * in order of first appearance, items in report order.
 */
export function groupIssues(messages) {
  const groups = [];
  for (const severity of severities) {
    const codes = new Map();
    let count = 0;
    for (const m of messages) {
      if (severityOf(m) !== severity) continue;
      count++;
      const key = m.code ?? "";
      if (!codes.has(key)) codes.set(key, { code: key, section: m.section ?? "", items: [] });
      codes.get(key).items.push(m);
    }
    if (count) groups.push({ severity, count, codes: [...codes.values()] });
  }
  return groups;
}

/** Counts by severity: {error, warning, info}. */
export function countIssues(messages) {
  const counts = { error: 0, warning: 0, info: 0 };
  for (const m of messages) counts[severityOf(m)]++;
  return counts;
}
