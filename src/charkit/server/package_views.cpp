// GET /api/packages/{id}/summary, /export.glb and /textures/N.png (docs/api.md
// §Package views): what the console's package page shows besides the
// report. They run on the blocking pool like every route.
#include <charconv>
#include <list>

#include "charkit/bem/export_gltf.h"
#include "charkit/bem/inspect.h"
#include "charkit/bem/load.h"
#include "charkit/bem/settings.h"
#include "charkit/core/json.h"
#include "charkit/core/mapped_file.h"
#include "charkit/scene/image.h"
#include "charkit/scene/texture_decode.h"
#include "charkit/server/detail/drivers_playground.h"
#include "charkit/server/detail/server_impl.h"
#include "charkit/server/error_codes.h"

namespace charkit::server {

/// GLB exports of selections and texture thumbnails, newest first, at most
/// kMaxBytes together; keyed by the package's content and the two selection
/// strings as asked (or the texture and size).
class ExportCache {
 public:
  static constexpr std::size_t kMaxBytes = 64u << 20;
  struct Entry {
    std::string key;
    std::string body;
    std::string content_type;
    std::string selection;  ///< the X-Charkit-Selection header of exports
  };
  std::optional<Entry> find(const std::string& key) {
    std::lock_guard lock(mutex_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->key != key) continue;
      entries_.splice(entries_.begin(), entries_, it);
      return entries_.front();
    }
    return std::nullopt;
  }
  void put(Entry e) {
    const std::size_t size = e.body.size() + e.selection.size() + e.key.size();
    if (size > kMaxBytes / 4) return;  // one export never takes most of the cache
    std::lock_guard lock(mutex_);
    bytes_ += size;
    entries_.push_front(std::move(e));
    while (bytes_ > kMaxBytes && !entries_.empty()) {
      const auto& old = entries_.back();
      bytes_ -= old.body.size() + old.selection.size() + old.key.size();
      entries_.pop_back();
    }
  }

 private:
  std::mutex mutex_;
  std::list<Entry> entries_;
  std::size_t bytes_ = 0;
};

ExportCache& Server::Impl::export_cache() {
  std::lock_guard lock(export_cache_mutex);
  if (!export_cache_) export_cache_ = std::make_shared<ExportCache>();
  return *export_cache_;
}

/// 409 unless the package validated (NOT_READY while its job runs,
/// PACKAGE_INVALID after it failed): exports, thumbnails and the drivers
/// playground need its model.
std::optional<StringResponse> Server::Impl::refuse_unless_valid(const store::Package& pkg) {
  if (pkg.validity == store::Validity::valid) return std::nullopt;
  if (pkg.validity == store::Validity::unknown)
    return error_reply(http::status::conflict, codes::NOT_READY, "the package is not validated yet",
                       Json{{"validity", "unknown"}});
  return error_reply(http::status::conflict, codes::PACKAGE_INVALID,
                     "the package is invalid: only a valid package is exported, has thumbnails "
                     "or runs its drivers (see /api/packages/" +
                         std::to_string(pkg.id) + "/report)");
}

std::variant<std::unique_ptr<OpenedPackage>, StringResponse> Server::Impl::open_package_file(
    const store::Asset& asset, bool load) {
  auto out = std::make_unique<OpenedPackage>();
  auto local = blobs->local_file(asset.storage_key);  // S3: a downloaded copy
  if (!local) return store_error_reply(local.error());
  out->local.emplace(std::move(*local));
  auto file = core::MappedFile::open(out->local->path().string());
  if (!file) return store_error_reply(file.error());
  out->file = std::move(*file);
  if (!load) return out;
  bem::ValidateOptions vo;
  vo.input_hints = &out->file;
  // The bound of package.validate jobs (docs/server.md §Limits).
  const std::uint64_t cap = std::numeric_limits<std::uint64_t>::max() / kDecodedBytesPerUploadByte;
  vo.max_decoded_bytes = options.job_budgets.max_decoded_bytes.value_or(
      kDecodedBytesPerUploadByte * std::min(options.max_upload_bytes, cap));
  vo.max_memory_bytes = package_memory_budget(options.job_budgets, out->file.bytes().size());
  vo.cancel = &stopping;
  out->loaded = bem::load_package(out->file.bytes(), vo);
  if (!out->loaded.ok())
    return error_reply(http::status::conflict, codes::PACKAGE_INVALID,
                       "the package cannot be read: " + out->loaded.error);
  return out;
}

Reply Server::Impl::handle_package_view(std::int64_t id, std::string_view view,
                                        const QueryParams& params) {
  auto p = catalogue->get_package(id);
  if (!p) return store_error_reply(p.error());
  if (!*p) return error_reply(http::status::not_found, codes::NOT_FOUND, "no such package");
  const store::Package& pkg = **p;
  const bool summary = view == "summary";
  // textures/N.png: the thumbnail of texture N, at most `size` pixels a side.
  std::optional<std::uint32_t> texture;
  std::uint32_t thumb_side = 128;
  if (view.starts_with("textures/")) {
    auto name = view.substr(9);
    std::uint32_t t = 0;
    auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), t);
    if (ec != std::errc() || std::string_view(end, name.data() + name.size()) != ".png" ||
        end == name.data())
      return error_reply(http::status::not_found, codes::NOT_FOUND,
                         "a texture thumbnail is textures/INDEX.png");
    texture = t;
    if (auto size = query_value(params, "size")) {
      auto [e2, ec2] = std::from_chars(size->data(), size->data() + size->size(), thumb_side);
      if (ec2 != std::errc() || e2 != size->data() + size->size() || thumb_side < 16 ||
          thumb_side > 512)
        return error_reply(http::status::bad_request, codes::BAD_PARAMETER,
                           "size is a whole number of pixels from 16 to 512");
    }
  }
  if (!summary)
    if (auto refusal = refuse_unless_valid(pkg)) return std::move(*refusal);
  auto a = catalogue->get_asset(pkg.asset_id);
  if (!a) return store_error_reply(a.error());
  if (!*a)
    return error_reply(http::status::not_found, codes::NOT_FOUND, "the package's asset is gone");
  const std::string options_text = query_value(params, "options").value_or("");
  const std::string parameters_text = query_value(params, "parameters").value_or("");
  // targets=1: §10 channels as morph targets (bem export --morph-targets), as
  // the drivers playground needs them.
  const std::string targets_text = query_value(params, "targets").value_or("0");
  if (targets_text != "0" && targets_text != "1")
    return error_reply(http::status::bad_request, codes::BAD_PARAMETER, "targets is 0 or 1");
  const bool morph_targets = targets_text == "1";
  const std::string key = texture ? (*a)->sha256 + "\ntexture\n" + std::to_string(*texture) + '\n' +
                                        std::to_string(thumb_side)
                                  : (*a)->sha256 + '\n' + options_text + '\n' + parameters_text +
                                        (morph_targets ? "\ntargets" : "");
  auto reply = [](const ExportCache::Entry& e, bool hit) {
    StringResponse res{http::status::ok, 11};
    res.set(http::field::content_type, e.content_type);
    res.set(http::field::cache_control, "no-store");
    if (!e.selection.empty()) res.set("X-Charkit-Selection", e.selection);
    res.set("X-Charkit-Cache", hit ? "hit" : "miss");
    res.body() = e.body;
    res.prepare_payload();
    return res;
  };
  if (!summary) {
    if (auto hit = export_cache().find(key)) return reply(*hit, true);
  }

  auto opened = open_package_file(**a, !summary);
  if (auto* refusal = std::get_if<StringResponse>(&opened)) return std::move(*refusal);
  const OpenedPackage& op = *std::get<0>(opened);
  if (summary) return json_reply(http::status::ok, bem::inspect_package(op.file.bytes()));
  const bem::LoadedPackage& loaded = op.loaded;
  const bem::Model& model = *loaded.model;

  ExportCache::Entry e;
  e.key = key;
  if (texture) {
    if (*texture >= model.textures.size())
      return error_reply(http::status::not_found, codes::NOT_FOUND,
                         "the package has " + std::to_string(model.textures.size()) +
                             " textures; there is no texture " + std::to_string(*texture));
    const bem::Texture& tex = model.textures[*texture];
    auto data = loaded.package->read_payload(tex.payload);
    if (!data)
      return error_reply(http::status::unprocessable_entity, data.error().code,
                         data.error().message);
    scene::DecodeLimits limits;
    limits.max_pixels = std::uint64_t{8192} * 8192;
    auto image =
        scene::decode_top_mip(tex.format, tex.width, tex.height, tex.srgb, data->bytes(), limits);
    if (!image)
      return error_reply(http::status::unprocessable_entity, image.error().code,
                         image.error().message);
    scene::flip_rows(*image);  // Unity stores the bottom row first; PNG the top row
    auto png = scene::encode_png(scene::resize_to_fit(*image, thumb_side, tex.srgb));
    if (!png)
      return error_reply(http::status::unprocessable_entity, png.error().code, png.error().message);
    e.content_type = "image/png";
    e.body.assign(reinterpret_cast<const char*>(png->data()), png->size());
    auto res = reply(e, false);
    export_cache().put(std::move(e));
    return res;
  }

  auto settings = bem::parse_settings(model, options_text, parameters_text);
  if (!settings) {
    Json detail = Json::object();
    if (settings.error().location.offset) detail["column"] = *settings.error().location.offset;
    return error_reply(http::status::bad_request, settings.error().code, settings.error().message,
                       detail);
  }
  bem::ExportOptions eo;
  eo.generator = "charkit";
  eo.morph_targets = morph_targets;
  auto exported = bem::export_glb(model, *loaded.package, *settings, eo);
  if (!exported)
    return error_reply(http::status::unprocessable_entity, exported.error().code,
                       exported.error().message);
  // What was exported, for the page: the normalised strings and every note
  // (settings normalisation and export), at most 32 of them.
  Json notes = Json::array();
  for (const bem::SettingsWarning& w : settings->warnings)
    notes.push_back(Json{{"code", w.code},
                         {"message", w.message},
                         {"in", w.in_parameters ? "parameters" : "options"},
                         {"column", w.column}});
  for (const bem::ExportWarning& w : exported->result.warnings)
    notes.push_back(Json{{"code", w.code}, {"message", w.message}, {"in", "export"}});
  const std::size_t total_notes = notes.size();
  if (notes.size() > 32) notes.erase(notes.begin() + 32, notes.end());
  Json selection{{"options", bem::format_options(model, *settings)},
                 {"parameters", bem::format_parameters(model, *settings)},
                 {"warnings", std::move(notes)},
                 {"warningCount", total_notes}};
  e.content_type = "model/gltf-binary";
  e.body.assign(reinterpret_cast<const char*>(exported->glb.data()), exported->glb.size());
  // A header value: JSON with every non-ASCII character escaped.
  e.selection = selection.dump(-1, ' ', true, Json::error_handler_t::replace);
  auto res = reply(e, false);
  export_cache().put(std::move(e));
  return res;
}

}  // namespace charkit::server

namespace charkit::server {

std::variant<std::shared_ptr<DriverPlayground>, StringResponse> Server::Impl::open_drivers(
    std::int64_t package_id, const QueryParams& params) {
  auto p = catalogue->get_package(package_id);
  if (!p) return store_error_reply(p.error());
  if (!*p) return error_reply(http::status::not_found, codes::NOT_FOUND, "no such package");
  if (auto refusal = refuse_unless_valid(**p)) return std::move(*refusal);
  auto a = catalogue->get_asset((*p)->asset_id);
  if (!a) return store_error_reply(a.error());
  if (!*a)
    return error_reply(http::status::not_found, codes::NOT_FOUND, "the package's asset is gone");
  auto opened = open_package_file(**a, true);
  if (auto* refusal = std::get_if<StringResponse>(&opened)) return std::move(*refusal);
  OpenedPackage& op = *std::get<0>(opened);
  const bem::Model& model = *op.loaded.model;
  bem::DriverSet set = bem::read_drivers(op.loaded.manifest, model);
  if (set.drivers.empty())
    return error_reply(http::status::unprocessable_entity, codes::NO_DRIVERS,
                       "the package has no drivers the runtime runs (BEM 1.5 §13)",
                       Json{{"log", set.log}});
  auto settings = bem::parse_settings(model, query_value(params, "options").value_or(""),
                                      query_value(params, "parameters").value_or(""));
  if (!settings) {
    Json detail = Json::object();
    if (settings.error().location.offset) detail["column"] = *settings.error().location.offset;
    return error_reply(http::status::bad_request, settings.error().code, settings.error().message,
                       detail);
  }
  bem::PlanOptions po;
  po.all_frames = true;  // the targets of export.glb?targets=1
  auto plan = bem::make_plan(model, *settings, po);
  if (!plan)
    return error_reply(http::status::unprocessable_entity, plan.error().code, plan.error().message);
  return std::make_shared<DriverPlayground>(package_id, std::move(*op.loaded.model), *settings,
                                            std::move(*plan), std::move(set));
}

}  // namespace charkit::server
