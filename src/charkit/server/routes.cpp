// The REST routes of docs/api.md on Server::Impl: the JSON of the records,
// uploads once their body is stored, lists, reads, deletes, the session
// (login) and the metrics; the connection code (server.cpp) calls them.
#include <string>
#include <utility>
#include <variant>

#include "charkit/core/error_codes.h"
#include "charkit/core/json.h"
#include "charkit/server/detail/server_impl.h"
#include "charkit/server/error_codes.h"

namespace charkit::server {

// ---- JSON of the records ----------------------------------------------------------

Json Server::Impl::asset_json(std::int64_t asset_id) {
  auto a = catalogue->get_asset(asset_id);
  if (!a || !*a) return nullptr;
  const store::Asset& x = **a;
  return Json{{"id", x.id},
              {"sha256", x.sha256},
              {"size", x.size},
              {"ext", x.ext},
              {"originalName", x.original_name},
              {"createdAt", x.created_at},
              {"refcount", x.refcount},
              {"url", "/api/assets/" + x.sha256}};
}

namespace {
Json common_fields(std::string_view kind, std::int64_t id, const Json& asset) {
  Json j = Json::object();
  j["id"] = id;
  j["kind"] = kind;
  j["sha256"] = asset.is_object() ? asset["sha256"] : Json(nullptr);
  j["size"] = asset.is_object() ? asset["size"] : Json(nullptr);
  j["originalName"] = asset.is_object() ? asset["originalName"] : Json(nullptr);
  j["url"] = "/api/" + std::string(kind) + "/" + std::to_string(id);
  j["contentUrl"] = asset.is_object() ? asset["url"] : Json(nullptr);
  return j;
}
}  // namespace

Json Server::Impl::model_json(const store::Model& m) {
  Json j = common_fields("models", m.id, asset_json(m.asset_id));
  if (!m.original_name.empty()) j["originalName"] = m.original_name;
  j["format"] = m.format;
  j["intakeState"] = store::state_name(m.intake_state);
  j["error"] = m.error.empty() ? Json(nullptr) : Json(m.error);
  j["vrmVersion"] = m.vrm_version.empty() ? Json(nullptr) : Json(m.vrm_version);
  j["skinned"] = m.skinned;
  j["humanoidBones"] = m.humanoid_bones;
  j["name"] = m.name;
  j["createdAt"] = m.created_at;
  j["updatedAt"] = m.updated_at;
  return j;
}

Json Server::Impl::motion_json(const store::Motion& m) {
  Json j = common_fields("motions", m.id, asset_json(m.asset_id));
  if (!m.original_name.empty()) j["originalName"] = m.original_name;
  j["format"] = m.format;
  j["preprocessState"] = store::state_name(m.preprocess_state);
  j["error"] = m.error.empty() ? Json(nullptr) : Json(m.error);
  j["fps"] = m.fps;
  j["frames"] = m.frames;
  j["durationS"] = m.duration_s;
  Json warnings = Json::array();
  for (const auto& w : m.warnings)
    warnings.push_back(Json{{"code", w.code}, {"message", w.message}});
  j["warnings"] = std::move(warnings);
  Json kp = nullptr;
  if (m.keypoints_asset_id) kp = asset_json(*m.keypoints_asset_id);
  j["keypointsSha256"] = kp.is_object() ? kp["sha256"] : Json(nullptr);
  j["keypointsUrl"] = m.preprocess_state == store::PreprocessState::done
                          ? Json("/api/motions/" + std::to_string(m.id) + "/keypoints.ndjson")
                          : Json(nullptr);
  j["createdAt"] = m.created_at;
  j["updatedAt"] = m.updated_at;
  return j;
}

Json Server::Impl::package_json(const store::Package& p) {
  Json j = common_fields("packages", p.id, asset_json(p.asset_id));
  if (!p.original_name.empty()) j["originalName"] = p.original_name;
  j["container"] = p.container;
  j["bemVersion"] = p.bem_version.empty() ? Json(nullptr) : Json(p.bem_version);
  j["validity"] = store::validity_name(p.validity);
  j["reportUrl"] = p.report_json.empty()
                       ? Json(nullptr)
                       : Json("/api/packages/" + std::to_string(p.id) + "/report");
  j["createdAt"] = p.created_at;
  j["updatedAt"] = p.updated_at;
  return j;
}

// ---- uploads, after the body ---------------------------------------------------------

StringResponse Server::Impl::finish_upload(store::Kind kind, const store::StoredBlob& blob,
                                           const std::string& original_name) {
  if (kind == store::Kind::keypoints)
    return error_reply(http::status::method_not_allowed, codes::METHOD_NOT_ALLOWED,
                       "keypoints are written by preprocessing");
  // The caller holds the content lock of blob.sha256 (no blob removal can
  // run meanwhile). A deletion may still drop the asset row between
  // put_asset and the record (CATALOGUE_NOT_FOUND): then the row is put again.
  const std::string ext =
      store::extension_of(original_name).empty() ? blob.ext : store::extension_of(original_name);
  Json body;
  bool created = false;
  bool rerun = false;  // an existing record that had failed: its job runs again
  std::string_view job_kind;
  std::int64_t id = 0;
  auto record = [&]() -> core::Status {
    auto asset = catalogue->put_asset(
        store::NewAsset{blob.sha256, kind, blob.ext, blob.size, original_name, blob.key});
    if (!asset) return std::move(asset).error();
    const std::int64_t aid = asset->record.id;
    // The record carries this upload's own format and name: the same bytes
    // may be a model for one client and a motion for another (the asset is
    // the content, whichever kind stored it first).
    switch (kind) {
      case store::Kind::model: {
        store::Model f;
        f.format = ext;
        f.original_name = original_name;
        auto r = catalogue->add_model(aid, f);
        if (!r) return std::move(r).error();
        created = r->created;
        id = r->record.id;
        job_kind = kJobModelIntake;
        if (!created && r->record.intake_state == store::PreprocessState::failed) {
          r->record.intake_state = store::PreprocessState::pending;
          r->record.error.clear();
          if (auto u = catalogue->update_model(r->record); !u) return std::move(u).error();
          rerun = true;
        }
        body = model_json(r->record);
        return core::Ok{};
      }
      case store::Kind::motion: {
        store::Motion f;
        f.format = ext;
        f.original_name = original_name;
        auto r = catalogue->add_motion(aid, f);
        if (!r) return std::move(r).error();
        created = r->created;
        id = r->record.id;
        job_kind = kJobMotionPreprocess;
        if (!created && r->record.preprocess_state == store::PreprocessState::failed) {
          r->record.preprocess_state = store::PreprocessState::pending;
          r->record.error.clear();
          r->record.warnings.clear();
          auto u = catalogue->update_motion(r->record);
          if (!u) return std::move(u).error();
          rerun = true;
        }
        body = motion_json(r->record);
        return core::Ok{};
      }
      default: {
        store::Package f;
        f.container = ext;
        f.original_name = original_name;
        auto r = catalogue->add_package(aid, f);
        if (!r) return std::move(r).error();
        created = r->created;
        id = r->record.id;
        job_kind = kJobPackageValidate;
        body = package_json(r->record);
        return core::Ok{};
      }
    }
  };
  core::Status recorded = record();
  for (int again = 0;
       !recorded && recorded.error().code == store::codes::CATALOGUE_NOT_FOUND && again < 3;
       ++again)
    recorded = record();
  if (!recorded) {
    // Nothing may point at a blob this upload published: remove it unless
    // an asset row (another upload's) records it.
    if (!blob.reused) {
      auto row = catalogue->find_asset(blob.sha256);
      if (row && !*row) (void)blobs->remove(blob.key);
    }
    return store_error_reply(recorded.error());
  }
  // A new record, or one whose job had failed (a storage outage, a budget
  // since raised): re-uploading the same bytes runs the job again. The
  // content lock makes one of two racing re-uploads see the other's reset.
  if (created || rerun) {
    auto job = queue->enqueue(job_kind, job_payload(id));
    if (!job) return store_error_reply(job.error());
    if (workers) workers->notify();
  }
  body["created"] = created;
  if (rerun) body["rerun"] = true;
  auto res = json_reply(created ? http::status::created : http::status::ok, body);
  res.set(http::field::location, body["url"].get<std::string>());
  return res;
}

// ---- the other routes ------------------------------------------------------------

Reply Server::Impl::handle_list(store::Kind kind, const QueryParams& params) {
  store::ListQuery q;
  if (auto v = query_value(params, "limit")) {
    auto n = parse_id(*v);
    if (!n)
      return error_reply(http::status::bad_request, codes::BAD_PARAMETER,
                         "limit must be a positive integer", Json{{"parameter", "limit"}});
    q.limit = std::min<std::int64_t>(*n, 1000);
  }
  if (auto v = query_value(params, "after")) {
    auto n = *v == "0" ? std::optional<std::int64_t>(0) : parse_id(*v);
    if (!n)
      return error_reply(http::status::bad_request, codes::BAD_PARAMETER,
                         "after must be a record id", Json{{"parameter", "after"}});
    q.after_id = *n;
  }
  if (auto v = query_value(params, "format")) q.format = *v;
  if (auto v = query_value(params, "state")) q.state = *v;
  Json items = Json::array();
  std::int64_t total = 0, next = 0;
  auto fill = [&](auto page, auto&& to_json) -> std::optional<StringResponse> {
    if (!page) return store_error_reply(page.error());
    for (const auto& r : page->items) items.push_back(to_json(r));
    total = page->total;
    next = page->next_after_id;
    return std::nullopt;
  };
  std::optional<StringResponse> err;
  if (kind == store::Kind::model)
    err = fill(catalogue->list_models(q), [&](const store::Model& m) { return model_json(m); });
  else if (kind == store::Kind::motion)
    err = fill(catalogue->list_motions(q), [&](const store::Motion& m) { return motion_json(m); });
  else
    err =
        fill(catalogue->list_packages(q), [&](const store::Package& p) { return package_json(p); });
  if (err) return std::move(*err);
  return json_reply(http::status::ok, Json{{"items", std::move(items)},
                                           {"total", total},
                                           {"nextAfter", next ? Json(next) : Json(nullptr)}});
}

Reply Server::Impl::handle_get(store::Kind kind, std::int64_t id) {
  auto not_found = [&] {
    return error_reply(
        http::status::not_found, codes::NOT_FOUND,
        std::string(store::kind_name(kind)) + " " + std::to_string(id) + " does not exist");
  };
  if (kind == store::Kind::model) {
    auto r = catalogue->get_model(id);
    if (!r) return store_error_reply(r.error());
    if (!*r) return not_found();
    return json_reply(http::status::ok, model_json(**r));
  }
  if (kind == store::Kind::motion) {
    auto r = catalogue->get_motion(id);
    if (!r) return store_error_reply(r.error());
    if (!*r) return not_found();
    return json_reply(http::status::ok, motion_json(**r));
  }
  auto r = catalogue->get_package(id);
  if (!r) return store_error_reply(r.error());
  if (!*r) return not_found();
  return json_reply(http::status::ok, package_json(**r));
}

Reply Server::Impl::handle_delete(store::Kind kind, std::int64_t id) {
  core::Result<store::Removed> r = kind == store::Kind::model    ? catalogue->delete_model(id)
                                   : kind == store::Kind::motion ? catalogue->delete_motion(id)
                                                                 : catalogue->delete_package(id);
  if (!r) return store_error_reply(r.error());
  if (!r->found)
    return error_reply(
        http::status::not_found, codes::NOT_FOUND,
        std::string(store::kind_name(kind)) + " " + std::to_string(id) + " does not exist");
  Json removed = Json::array();
  for (const auto& sha : store::remove_orphan_blobs(*catalogue, *blobs, r->orphans))
    removed.push_back(sha);
  return json_reply(
      http::status::ok,
      Json{{"deleted", id}, {"kind", store::kind_name(kind)}, {"removedBlobs", removed}});
}

Reply Server::Impl::handle_asset(const store::Asset& asset,
                                 const http::request<http::string_body>& req) {
  auto reader = blobs->open_blob(asset.storage_key);
  if (!reader) return store_error_reply(reader.error());
  auto shared = std::make_shared<store::BlobReader>(std::move(*reader));
  const std::uint64_t size = shared->size();
  ByteRange range;
  if (auto h = req.find(http::field::range); h != req.end())
    range = parse_range(sv(h->value()), size);
  if (range.kind == ByteRange::Kind::kUnsatisfiable) {
    auto res = error_reply(http::status::range_not_satisfiable, codes::RANGE_NOT_SATISFIABLE,
                           "the range lies outside the " + std::to_string(size) + "-byte content");
    res.set(http::field::content_range, "bytes */" + std::to_string(size));
    return res;
  }
  BlobReply res;
  auto& head = res.head;
  head.version(11);
  head.set(http::field::content_type, bsv(content_type_of(asset.ext)));
  head.set(http::field::accept_ranges, "bytes");
  head.set(http::field::etag, "\"" + asset.sha256 + "\"");
  head.set(http::field::cache_control, "public, max-age=31536000, immutable");
  res.reader = shared;
  if (range.kind == ByteRange::Kind::kSatisfiable) {
    head.result(http::status::partial_content);
    res.offset = range.first;
    res.length = range.last - range.first + 1;
    head.set(http::field::content_range, "bytes " + std::to_string(range.first) + "-" +
                                             std::to_string(range.last) + "/" +
                                             std::to_string(size));
  } else {
    head.result(http::status::ok);
    res.offset = 0;
    res.length = size;
  }
  return res;
}

StringResponse Server::Impl::internal_error(const std::exception& e) {
  metrics.handler_exceptions.fetch_add(1);
  log(std::string("internal error: ") + e.what());
  return error_reply(http::status::internal_server_error, core::codes::INTERNAL,
                     "the server failed to answer this request (logged)");
}

Reply Server::Impl::handle_safely(const http::request<http::string_body>& req, const Target& target,
                                  const Route& route) {
  try {
    return handle(req, target, route);
  } catch (const std::exception& e) {
    return internal_error(e);
  }
}

StringResponse Server::Impl::console_reply(const http::request<http::string_body>& req,
                                           const ConsoleFile& file, bool page) {
  const bool fresh = etag_matches(sv(req[http::field::if_none_match]), file.etag);
  StringResponse res{fresh ? http::status::not_modified : http::status::ok, 11};
  res.set(http::field::etag, file.etag);
  // Revalidated on every load: the bundle's name does not change between builds.
  res.set(http::field::cache_control, "no-cache");
  res.set("X-Content-Type-Options", "nosniff");
  if (page) {
    // Scripts and styles from this server only; model textures arrive as
    // blob: URLs (GLTFLoader); streams are WebSockets to this server.
    res.set("Content-Security-Policy",
            "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
            "img-src 'self' blob: data:; connect-src 'self' blob: data:; worker-src 'self' blob:; "
            "object-src 'none'; base-uri 'none'; frame-ancestors 'none'");
    res.set("Referrer-Policy", "same-origin");
  }
  if (!fresh) {
    res.set(http::field::content_type, file.content_type);
    res.body() = file.body;
  }
  res.prepare_payload();
  return res;
}

Reply Server::Impl::handle(const http::request<http::string_body>& req, const Target& target,
                           const Route& route) {
  const auto& seg = target.segments;
  const auto method = req.method();
  const QueryParams& params = target.params;
  auto not_allowed = [](std::string_view allow) {
    auto res = error_reply(http::status::method_not_allowed, codes::METHOD_NOT_ALLOWED,
                           "allowed here: " + std::string(allow));
    res.set(http::field::allow, bsv(allow));
    return res;
  };
  auto not_found = [&] {
    return error_reply(http::status::not_found, codes::NOT_FOUND,
                       "no route for " + std::string(req.target()));
  };
  auto html = [](std::string_view page, bool no_store) {
    StringResponse res{http::status::ok, 11};
    res.set(http::field::content_type, "text/html; charset=utf-8");
    if (no_store) res.set(http::field::cache_control, "no-store");
    res.body() = std::string(page);
    res.prepare_payload();
    return res;
  };
  // The record id of the routes under /api/KIND/ID: 400 when it is not one.
  std::optional<std::int64_t> id;
  switch (route.id) {
    case RouteId::record:
    case RouteId::package_texture:
    case RouteId::package_view:
    case RouteId::package_report:
    case RouteId::motion_keypoints:
      id = parse_id(seg[2]);
      if (!id)
        return error_reply(http::status::bad_request, codes::BAD_ID,
                           core::quote_excerpt(seg[2]) + " is not a record id");
      break;
    default:
      break;
  }

  switch (route.id) {
    case RouteId::console_page:
      // The web console's page routes answer index.html (the app reads the
      // path); without a built console, / is the plain built-in page.
      if (method != http::verb::get) return not_allowed("GET");
      if (console) return console_reply(req, console->index, true);
      return html(index_html(), false);
    case RouteId::console_asset: {
      if (method != http::verb::get) return not_allowed("GET");
      auto it = console->assets.find(seg[1]);
      if (it == console->assets.end()) return not_found();
      return console_reply(req, it->second, false);
    }
    case RouteId::login:
      if (method != http::verb::get) return not_allowed("GET");
      return html(login_html(), true);
    case RouteId::favicon: {
      if (method != http::verb::get) return not_allowed("GET");
      StringResponse res{http::status::ok, 11};
      res.set(http::field::content_type, "image/svg+xml");
      res.set(http::field::cache_control, "public, max-age=86400");
      res.body() = std::string(favicon_svg());
      res.prepare_payload();
      return res;
    }
    case RouteId::session:
      return handle_session(req);
    case RouteId::live_channels: {
      if (method != http::verb::get) return not_allowed("GET");
      Json list = Json::array();
      for (const ws::LiveChannelInfo& c : ws::live_channels(hub))
        list.push_back(
            Json{{"name", c.name}, {"publishing", c.publishing}, {"viewers", c.viewers}});
      return json_reply(http::status::ok, Json{{"channels", std::move(list)}});
    }
    case RouteId::healthz: {
      if (method != http::verb::get) return not_allowed("GET");
      auto v = catalogue->schema_version();
      if (!v) return store_error_reply(v.error());
      return json_reply(
          http::status::ok,
          Json{{"status", "ok"}, {"database", catalogue->backend()}, {"schemaVersion", *v}});
    }
    case RouteId::metrics:
      if (method != http::verb::get) return not_allowed("GET");
      return handle_metrics();
    case RouteId::asset: {
      if (method != http::verb::get) return not_allowed("GET");
      if (!is_sha256_hex(seg[2]))
        return error_reply(http::status::bad_request, codes::BAD_SHA256,
                           "an asset is named by 64 lower-case hex digits");
      auto a = catalogue->find_asset(seg[2]);
      if (!a) return store_error_reply(a.error());
      if (!*a)
        return error_reply(http::status::not_found, codes::NOT_FOUND, "no asset with this sha256");
      return handle_asset(**a, req);
    }
    case RouteId::records:
      // POST is an upload (RouteKind::upload), served before a body is read.
      if (method == http::verb::get) return handle_list(*route.record_kind, params);
      return not_allowed("GET, POST");
    case RouteId::record:
      if (method == http::verb::get) return handle_get(*route.record_kind, *id);
      if (method == http::verb::delete_) return handle_delete(*route.record_kind, *id);
      return not_allowed("GET, DELETE");
    case RouteId::package_texture:
      if (method != http::verb::get) return not_allowed("GET");
      return handle_package_view(*id, "textures/" + seg[4], params);
    case RouteId::package_view:
      if (method != http::verb::get) return not_allowed("GET");
      return handle_package_view(*id, seg[3], params);
    case RouteId::motion_keypoints: {
      if (method != http::verb::get) return not_allowed("GET");
      auto ready = ready_keypoints(*id);
      if (auto* refusal = std::get_if<StringResponse>(&ready)) return std::move(*refusal);
      return handle_asset(std::get<ReadyKeypoints>(ready).asset, req);
    }
    case RouteId::package_report: {
      if (method != http::verb::get) return not_allowed("GET");
      auto p = catalogue->get_package(*id);
      if (!p) return store_error_reply(p.error());
      if (!*p) return error_reply(http::status::not_found, codes::NOT_FOUND, "no such package");
      if ((*p)->report_json.empty())
        return error_reply(http::status::conflict, codes::NOT_READY,
                           "the package is not validated yet",
                           Json{{"validity", store::validity_name((*p)->validity)}});
      StringResponse res{http::status::ok, 11};
      res.set(http::field::content_type, "application/json");
      res.body() = core::to_valid_utf8((*p)->report_json) + "\n";
      res.prepare_payload();
      return res;
    }
    case RouteId::motion_stream:
    case RouteId::package_drivers:
    case RouteId::live:  // WebSockets: the connection hands them over, never here
    case RouteId::not_found:
      break;
  }
  return not_found();
}

StringResponse Server::Impl::handle_session(const http::request<http::string_body>& req) {
  const std::string cookie_attrs =
      std::string("; Path=/; HttpOnly; SameSite=Strict") + (tls ? "; Secure" : "");
  if (req.method() == http::verb::delete_) {
    // Logout ends the session in the catalogue, not only in this browser: a
    // copy of the cookie stops working too.
    const std::string session = session_cookie(sv(req[http::field::cookie]));
    bool ended = false;
    if (!session.empty()) {
      auto r = store::TokenStore(*catalogue).revoke_session(session);
      if (!r) return store_error_reply(r.error());
      ended = *r;
      auth_cache.clear();
    }
    auto res =
        json_reply(http::status::ok, Json{{"authenticated", false}, {"sessionEnded", ended}});
    res.set(http::field::set_cookie,
            std::string(kSessionCookie) + "=" + cookie_attrs + "; Max-Age=0");
    return res;
  }
  if (req.method() == http::verb::get) {
    std::string secret =
        request_secret(sv(req[http::field::authorization]), sv(req[http::field::cookie]));
    auto d = lookup_auth(secret);
    if (!d) return store_error_reply(d.error());
    const bool required = d->tokens_exist || options.auth == AuthMode::required;
    return json_reply(http::status::ok,
                      Json{{"authRequired", required},
                           {"authenticated", d->scope.has_value()},
                           {"scope", d->scope ? Json(store::scope_name(*d->scope)) : Json(nullptr)},
                           {"publicRead", options.public_read}});
  }
  if (req.method() != http::verb::post) {
    auto res = error_reply(http::status::method_not_allowed, codes::METHOD_NOT_ALLOWED,
                           "allowed here: GET, POST, DELETE");
    res.set(http::field::allow, "GET, POST, DELETE");
    return res;
  }
  // The token comes as JSON {"token": "..."} or as the login form's
  // application/x-www-form-urlencoded `token=...`.
  const bool form = core::ascii_iequals(sv(req[http::field::content_type]).substr(0, 33),
                                        "application/x-www-form-urlencoded");
  std::string secret;
  if (form) {
    auto q = parse_query(req.body());
    if (q)
      if (auto t = query_value(*q, "token")) secret = *t;
  } else {
    auto j = core::parse_json_strict(req.body());
    if (j && j->is_object() && j->contains("token") && (*j)["token"].is_string())
      secret = (*j)["token"].get<std::string>();
  }
  while (!secret.empty() &&
         (secret.back() == ' ' || secret.back() == '\n' || secret.back() == '\r'))
    secret.pop_back();
  // Only an API token opens a session (a session's secret would renew itself forever).
  std::optional<AuthCache::Decision> d;
  if (secret.substr(0, store::kTokenPrefix.size()) == store::kTokenPrefix) {
    auto looked = lookup_auth(secret);
    if (!looked) return store_error_reply(looked.error());
    d = *looked;
  }
  if (!d || !d->scope || !d->token_id) {
    if (form) {
      StringResponse res{http::status::see_other, 11};
      res.set(http::field::location, "/login?failed=1");
      res.prepare_payload();
      return res;
    }
    return error_reply(http::status::unauthorized, codes::UNAUTHENTICATED,
                       "not an active API token of this server");
  }
  // The cookie holds a new session's secret, never the token: HttpOnly (no
  // script reads it), SameSite=Strict (no other site's page sends it),
  // Secure under TLS; it ends with the session (logout, expiry, or the
  // token's revocation).
  const auto lifetime =
      std::chrono::duration_cast<std::chrono::milliseconds>(options.session_lifetime);
  auto session = store::TokenStore(*catalogue).create_session(*d->token_id, lifetime.count());
  if (!session) return store_error_reply(session.error());
  const std::string cookie = std::string(kSessionCookie) + "=" + session->secret + cookie_attrs +
                             "; Max-Age=" + std::to_string(lifetime.count() / 1000);
  if (form) {
    StringResponse res{http::status::see_other, 11};
    res.set(http::field::location, "/");
    res.set(http::field::set_cookie, cookie);
    res.prepare_payload();
    return res;
  }
  auto res = json_reply(http::status::ok, Json{{"authenticated", true},
                                               {"scope", store::scope_name(*d->scope)},
                                               {"sessionId", session->session.id},
                                               {"expiresAt", session->session.expires_at}});
  res.set(http::field::set_cookie, cookie);
  return res;
}

StringResponse Server::Impl::handle_metrics() {
  std::vector<std::pair<std::string, std::int64_t>> jobs;
  for (auto st : {store::JobState::pending, store::JobState::running, store::JobState::done,
                  store::JobState::failed}) {
    auto n = queue->count(st);
    jobs.emplace_back(std::string(store::job_state_name(st)), n ? *n : -1);
  }
  StringResponse res{http::status::ok, 11};
  res.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
  res.set(http::field::cache_control, "no-store");
  res.body() = metrics.render(jobs);
  if (workers) {  // this process's job threads (a `charkit worker` keeps its own)
    const WorkerPoolStats w = workers->stats();
    Metrics::render_counters(
        res.body(),
        {{"charkit_jobs_claimed_total", "Jobs claimed by this server's workers.", w.claims},
         {"charkit_jobs_retried_total", "Claims of a job claimed before (a worker died).",
          w.retries},
         {"charkit_jobs_completed_total", "Jobs marked done.", w.completions},
         {"charkit_jobs_failed_total", "Jobs marked failed (could not run).", w.failures},
         {"charkit_jobs_released_total", "Jobs returned to pending by a graceful stop.",
          w.releases},
         {"charkit_jobs_storage_retries_total",
          "Jobs returned to pending by a transient storage error.", w.storage_retries},
         {"charkit_jobs_lost_claims_total", "Claims lost to another worker: result discarded.",
          w.lost_claims},
         {"charkit_jobs_heartbeat_failures_total", "Lease heartbeats that failed.",
          w.heartbeat_failures},
         {"charkit_jobs_budget_exceeded_total", "Jobs ended by a budget (JOB_BUDGET_*).",
          w.budget_failures},
         {"charkit_jobs_notifications_total", "Wake-ups by a PostgreSQL NOTIFY.",
          w.notifications}});
  }
  res.prepare_payload();
  return res;
}

std::variant<Server::Impl::ReadyKeypoints, StringResponse> Server::Impl::ready_keypoints(
    std::int64_t motion_id) {
  auto m = catalogue->get_motion(motion_id);
  if (!m) return store_error_reply(m.error());
  if (!*m) return error_reply(http::status::not_found, codes::NOT_FOUND, "no such motion");
  if ((*m)->preprocess_state != store::PreprocessState::done || !(*m)->keypoints_asset_id)
    return error_reply(http::status::conflict, codes::NOT_READY,
                       "the motion's keypoints are not ready",
                       Json{{"preprocessState", store::state_name((*m)->preprocess_state)},
                            {"error", (*m)->error}});
  auto a = catalogue->get_asset(*(*m)->keypoints_asset_id);
  if (!a) return store_error_reply(a.error());
  if (!*a) return error_reply(http::status::not_found, codes::NOT_FOUND, "keypoint asset missing");
  return ReadyKeypoints{std::move(**m), std::move(**a)};
}

std::variant<std::shared_ptr<const ws::FrameSource>, StringResponse> Server::Impl::open_stream(
    std::int64_t motion_id) {
  auto ready = ready_keypoints(motion_id);
  if (auto* refusal = std::get_if<StringResponse>(&ready)) return std::move(*refusal);
  const store::Motion& motion = std::get<ReadyKeypoints>(ready).motion;
  const store::Asset& asset = std::get<ReadyKeypoints>(ready).asset;
  const std::string sha = asset.sha256;
  {
    std::lock_guard lock(hub.mutex);
    if (auto it = hub.cache.find(sha); it != hub.cache.end()) {
      if (auto f = it->second.lock()) return f;
      hub.cache.erase(it);
    }
  }
  auto reader = blobs->open_blob(asset.storage_key);
  if (!reader) return store_error_reply(reader.error());
  if (reader->size() > ws::kMaxNdjsonBytes)
    return error_reply(http::status::payload_too_large, codes::KEYPOINTS_TOO_LARGE,
                       "the keypoint file is too large to stream");
  // One scan for the line offsets (bounded memory); frames are read a window
  // at a time while the motion plays.
  auto shared = std::make_shared<store::BlobReader>(std::move(*reader));
  const double fps = motion.fps > 0 ? motion.fps : 30.0;
  auto source = ws::FrameSource::open(
      [shared](std::uint64_t offset, std::span<std::uint8_t> out) {
        return shared->read_at(offset, out);
      },
      shared->size(), fps, &stopping);
  if (!source)
    return error_reply(http::status::internal_server_error, codes::KEYPOINTS_INVALID,
                       source.error().message);
  std::lock_guard lock(hub.mutex);
  // Entries of motions nobody streams any more go when a new one is added.
  std::erase_if(hub.cache, [](const auto& kv) { return kv.second.expired(); });
  hub.cache[sha] = *source;
  return *source;
}

}  // namespace charkit::server
