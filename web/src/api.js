// The console's calls to charkit's HTTP API (docs/api.md). A 401 sends the
// browser to the login page; other errors become ApiError with the server's
// error code and message.

export class ApiError extends Error {
  constructor(status, code, message, detail) {
    super(message || `HTTP ${status}`);
    this.status = status;
    this.code = code;
    this.detail = detail;
  }
  /** "CODE: message (HTTP n)": for logs and tests; people read sentence(). */
  describe() {
    return `${this.code ? this.code + ": " : ""}${this.message} (HTTP ${this.status})`;
  }
  /** A plain sentence for people; the code is shown small beside it (ui.js errorView). */
  sentence() {
    return SENTENCES[this.code] ?? asSentence(this.message);
  }
}

/** What the errors people meet most say in plain words (the others: the server's message as a sentence). */
const SENTENCES = {
  EMPTY_BODY: "The file is empty.",
  UPLOAD_TOO_LARGE: "The file is larger than this server accepts.",
  UNSUPPORTED_EXTENSION: "charkit does not take files of this kind here.",
  MISSING_FILENAME: "The upload did not say the file's name.",
  UNAUTHENTICATED: "You need to log in.",
  FORBIDDEN: "Your token may not do this.",
  NOT_FOUND: "It is not there (deleted, or never uploaded).",
  PACKAGE_INVALID: "The package is not valid, so it cannot be shown.",
  NETWORK: "The server could not be reached.",
  SHUTTING_DOWN: "The server is shutting down; try again in a moment.",
};

/** "the request body must hold the file" → "The request body must hold the file." */
export function asSentence(text) {
  const t = String(text ?? "").trim();
  if (!t) return "Something went wrong.";
  const first = t[0].toUpperCase() + t.slice(1);
  return /[.!?]$/.test(first) ? first : `${first}.`;
}

/** The server needs a token: its login page sets the cookie, then returns to /. */
export function toLogin() {
  location.assign("/login");
}

/** The WebSocket URL of a server path (ws: or wss: as the page was loaded). */
export function wsUrl(path) {
  return `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${path}`;
}

async function errorOf(r) {
  let body = null;
  try {
    body = await r.json();
  } catch {
    /* not JSON */
  }
  return new ApiError(r.status, body?.error ?? "", body?.message ?? r.statusText, body?.detail);
}

/** GET/DELETE/… returning parsed JSON. */
export async function api(path, options = {}) {
  const r = await fetch(path, { credentials: "same-origin", ...options });
  if (r.status === 401) {
    toLogin();
    throw new ApiError(401, "UNAUTHENTICATED", "login needed");
  }
  if (!r.ok) throw await errorOf(r);
  return r.status === 204 ? null : r.json();
}

/** GET returning an ArrayBuffer (model files, GLB exports). */
export async function fetchBytes(path) {
  return (await fetchResponse(path)).arrayBuffer();
}

/** GET returning the Response (for its headers) once it is known to be OK. */
export async function fetchResponse(path, options = {}) {
  const r = await fetch(path, { credentials: "same-origin", ...options });
  if (r.status === 401) {
    toLogin();
    throw new ApiError(401, "UNAUTHENTICATED", "login needed");
  }
  if (!r.ok) throw await errorOf(r);
  return r;
}

/**
 * Uploads one file to /api/{kind} with progress (XMLHttpRequest: fetch has
 * no upload progress). onProgress(fraction 0…1). Resolves to the record.
 */
export function upload(kind, file, onProgress = () => {}) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", `/api/${kind}?filename=${encodeURIComponent(file.name)}`);
    xhr.responseType = "json";
    xhr.upload.addEventListener("progress", (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    });
    xhr.addEventListener("load", () => {
      const body = xhr.response;
      if (xhr.status === 401) {
        toLogin();
        reject(new ApiError(401, "UNAUTHENTICATED", "login needed"));
      } else if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(1);
        resolve(body);
      } else {
        reject(new ApiError(xhr.status, body?.error ?? "", body?.message ?? xhr.statusText, body?.detail));
      }
    });
    xhr.addEventListener("error", () => reject(new ApiError(0, "NETWORK", "the connection failed")));
    xhr.send(file);
  });
}
