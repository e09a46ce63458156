// GET /: one self-contained page; the upload form posts multipart/form-data with fetch().
#include "charkit/server/detail/page.h"

namespace charkit::server {

std::string_view index_html() {
  static constexpr std::string_view kPage = R"HTML(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>charkit</title>
<link rel="icon" href="/favicon.ico" type="image/svg+xml">
<style>
body { font-family: system-ui, sans-serif; margin: 2em; max-width: 70em; }
table { border-collapse: collapse; margin-bottom: 1em; }
td, th { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: left; }
.failed, .invalid { color: #b00; } .done, .valid { color: #070; } .warning { color: #a60; }
</style>
</head>
<body>
<h1>charkit</h1>
<p>Upload a file: models (.vrm .glb .gltf .fbx), motions (.bvh .fbx .gltf .glb .json),
packages (.bem .zip). The API is described in docs/api.md.</p>
<form id="upload">
<select id="kind"><option>models</option><option>motions</option><option>packages</option></select>
<input type="file" id="file"> <button>Upload</button> <span id="status"></span>
</form>
<div id="lists"></div>
<script>
const esc = s => String(s ?? "").replace(/[&<>"]/g, c => ({"&":"&amp;","<":"&lt;",">":"&gt;","\"":"&quot;"}[c]));
const cols = {
  models: ["id", "originalName", "format", "intakeState", "vrmVersion", "skinned", "error"],
  motions: ["id", "originalName", "format", "preprocessState", "frames", "fps", "error", "warnings"],
  packages: ["id", "originalName", "container", "bemVersion", "validity"]
};
// A table cell; warnings ([{code, message}]) one per line.
const cell = (c, v) => c === "warnings"
  ? "<td class=\"warnings\">" + (v || []).map(w => "<div class=\"warning\">" + esc(w.code) +
      ": " + esc(w.message) + "</div>").join("") + "</td>"
  : "<td class=\"" + esc(v) + "\">" + esc(v) + "</td>";
async function refresh() {
  let html = "";
  for (const kind of Object.keys(cols)) {
    const r = await fetch("/api/" + kind + "?limit=100");
    if (r.status === 401) { location.href = "/login"; return; }
    const page = await r.json();
    html += "<h2>" + kind + " (" + esc(page.total) + ")</h2><table><tr>";
    for (const c of cols[kind]) html += "<th>" + esc(c) + "</th>";
    html += "<th>links</th></tr>";
    for (const it of page.items || []) {
      html += "<tr>";
      for (const c of cols[kind]) html += cell(c, it[c]);
      let links = "<a href=\"" + esc(it.contentUrl) + "\">file</a>";
      if (it.keypointsUrl) links += " <a href=\"" + esc(it.keypointsUrl) + "\">keypoints</a>";
      if (it.reportUrl) links += " <a href=\"" + esc(it.reportUrl) + "\">report</a>";
      html += "<td>" + links + "</td></tr>";
    }
    html += "</table>";
  }
  document.getElementById("lists").innerHTML = html;
}
document.getElementById("upload").addEventListener("submit", async ev => {
  ev.preventDefault();
  const f = document.getElementById("file").files[0];
  const kind = document.getElementById("kind").value;
  const status = document.getElementById("status");
  if (!f) { status.textContent = "choose a file"; return; }
  status.textContent = "uploading…";
  // multipart/form-data: the server streams the file part into the store.
  const form = new FormData();
  form.append("file", f, f.name);
  const r = await fetch("/api/" + kind, {method: "POST", body: form});
  const j = await r.json();
  status.textContent = r.ok ? (j.created ? "stored as " : "already stored as ") + kind + " " + j.id
                            : r.status + " " + j.error + ": " + j.message;
  refresh();
});
refresh();
setInterval(refresh, 3000);
</script>
</body>
</html>
)HTML";
  return kPage;
}

std::string_view login_html() {
  static constexpr std::string_view kPage = R"HTML(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>charkit: log in</title>
<link rel="icon" href="/favicon.ico" type="image/svg+xml">
<style>body { font-family: system-ui, sans-serif; margin: 2em; max-width: 40em; }
input { width: 100%; font-family: monospace; } .failed { color: #b00; }</style>
</head>
<body>
<h1>charkit</h1>
<p>This server needs an API token. Ask its operator for one
(<code>charkit token create --scope read|write|admin</code>) and paste it here.</p>
<p class="failed" id="failed" hidden>That is not an active token of this server.</p>
<form method="post" action="/api/session">
<p><input name="token" type="password" autocomplete="current-password" placeholder="ckt_…" required></p>
<p><button>Log in</button></p>
</form>
<script>
if (new URLSearchParams(location.search).has("failed"))
  document.getElementById("failed").hidden = false;
</script>
</body>
</html>
)HTML";
  return kPage;
}

std::string_view favicon_svg() {
  // A figure in a rounded square: head, body and the two arms of a T-pose.
  static constexpr std::string_view kIcon =
      R"SVG(<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">)SVG"
      R"SVG(<rect width="32" height="32" rx="7" fill="#2b5fd9"/>)SVG"
      R"SVG(<circle cx="16" cy="8.5" r="3.5" fill="#fff"/>)SVG"
      R"SVG(<path d="M6 14h20M16 13v8M16 21l-4.5 7M16 21l4.5 7" stroke="#fff" stroke-width="3")SVG"
      R"SVG( stroke-linecap="round" fill="none"/></svg>)SVG";
  return kIcon;
}

}  // namespace charkit::server
