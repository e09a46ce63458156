// The charkit console: a single-page app served by `charkit serve`
// (docs/console.md). Routes: / (dashboard), /models, /models/{id},
// /motions, /motions/{id}, /packages, /packages/{id}, /live, /live/{channel}.
// window.charkitConsole is a read-only view of the page's state for tests.
import { api } from "./api.js";
import { errorView, h, mount, toast } from "./ui.js";
import { dashboardPage, listPage } from "./pages/lists.js";
import { modelPage } from "./pages/model.js";
import { motionPage, livePage, liveListPage } from "./pages/motion.js";
import { packagePage } from "./pages/package.js";

const debug = { route: null, page: null, session: null, ready: false };
Object.defineProperty(window, "charkitConsole", { value: debug, writable: false });

const routes = [
  [/^\/$/, () => dashboardPage],
  [/^\/(models|motions|packages)$/, (m) => (ctx) => listPage(ctx, m[1])],
  [/^\/models\/(\d+)$/, (m) => (ctx) => modelPage(ctx, Number(m[1]))],
  [/^\/motions\/(\d+)$/, (m) => (ctx) => motionPage(ctx, Number(m[1]))],
  [/^\/packages\/(\d+)$/, (m) => (ctx) => packagePage(ctx, Number(m[1]))],
  [/^\/live$/, () => liveListPage],
  [/^\/live\/([A-Za-z0-9_-]{1,64})$/, (m) => (ctx) => livePage(ctx, m[1])],
];

let current = null;  // {dispose} of the page shown
let generation = 0;  // counts render() calls: a page that resolves after the next render is disposed

/** Shows the page of the current URL. */
async function render() {
  const app = document.getElementById("app");
  current?.dispose?.();
  current = null;
  const mine = ++generation;
  debug.ready = false;
  debug.page = null;
  const path = location.pathname.replace(/\/+$/, "") || "/";
  for (const a of document.querySelectorAll("[data-nav]"))
    a.toggleAttribute("aria-current", path.startsWith(`/${a.dataset.nav}`));
  let page = null;
  for (const [re, make] of routes) {
    const m = path.match(re);
    if (m) {
      page = make(m);
      break;
    }
  }
  debug.route = path;
  if (!page) {
    mount(app, h("h1", {}, "Not found"), h("p", {}, "No console page at ", h("code", {}, path), ". ",
      h("a", { href: "/" }, "Back to the dashboard")));
    return;
  }
  const stale = () => mine !== generation;
  const ctx = { app, debug, navigate, stale, search: new URLSearchParams(location.search) };
  try {
    const shown = (await page(ctx)) ?? null;
    if (stale()) {
      shown?.dispose?.();
      return;
    }
    current = shown;
  } catch (e) {
    if (stale()) return;
    mount(app, h("h1", {}, "Something went wrong"), h("p", { class: "error-text" }, errorView(e)));
    if (e.status !== 401) toast(errorView(e), "error");
  }
  debug.ready = true;
}

/** Goes to a console route without reloading (back/forward work). */
export function navigate(url, { replace = false } = {}) {
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  render();
  document.getElementById("app")?.focus({ preventScroll: true });
}

// Same-origin links to console routes are handled here; /api and /login are not.
document.addEventListener("click", (e) => {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = e.target.closest?.("a[href]");
  if (!a || a.target || a.hasAttribute("download")) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || url.pathname.startsWith("/api/") || url.pathname === "/login") return;
  e.preventDefault();
  navigate(url.pathname + url.search);
});
window.addEventListener("popstate", render);

function applyTheme(theme) {
  document.documentElement.dataset.theme = theme;
  try {
    localStorage.setItem("charkit-theme", theme);
  } catch {
    /* private mode */
  }
}

async function start() {
  let theme = null;
  try {
    theme = localStorage.getItem("charkit-theme");
  } catch {
    /* private mode */
  }
  applyTheme(theme ?? (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light"));
  document.getElementById("theme")?.addEventListener("click", () =>
    applyTheme(document.documentElement.dataset.theme === "dark" ? "light" : "dark"));
  try {
    debug.session = await api("/api/session");
  } catch {
    debug.session = null;
  }
  await render();
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
