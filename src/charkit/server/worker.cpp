// Job execution and the worker thread pool (worker.h).
#include "charkit/server/worker.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "charkit/bem/validate.h"
#include "charkit/core/json.h"
#include "charkit/core/json_text.h"
#include "charkit/core/mapped_file.h"
#include "charkit/core/utf8.h"
#include "charkit/motion/assimp_motion.h"
#include "charkit/motion/convert.h"
#include "charkit/motion/keypoint_json.h"
#include "charkit/scene/intake.h"
#include "charkit/store/jobs.h"

namespace charkit::server {
namespace {

using core::Json;
using core::Status;

/// "CODE: message (location)", valid UTF-8: it is stored in the catalogue and
/// served as JSON, and messages may quote bytes of the input.
std::string error_text(const core::Error& e) {
  std::string s = e.code + ": " + e.message;
  if (!e.location.empty()) s += " (" + e.location.to_string() + ")";
  return core::to_valid_utf8(s);
}

core::Result<std::int64_t> payload_id(std::string_view payload) {
  auto j = core::parse_json_strict(payload);
  if (!j || !j->is_object() || !j->contains("id") || !(*j)["id"].is_number_integer())
    return core::make_error("JOB_PAYLOAD", "job payload is not {\"id\": N}");
  return (*j)["id"].get<std::int64_t>();
}

void remove_orphans(const store::BlobStore& blobs, const std::vector<store::Asset>& orphans) {
  for (const auto& a : orphans) (void)blobs.remove(a.storage_key);
}

core::Result<store::Asset> asset_of(store::Catalogue& cat, std::int64_t asset_id) {
  auto a = cat.get_asset(asset_id);
  if (!a) return std::move(a).error();
  if (!*a) return core::make_error("JOB_ASSET_MISSING", "the record's asset row is gone");
  return std::move(**a);
}

// ---- motion.preprocess ------------------------------------------------------

struct NdjsonOut {
  std::uint64_t frames = 0;
  double fps = motion::kDefaultFps;
};

/// Converts the motion file into the upload; the format decides the path.
core::Result<NdjsonOut> convert_motion(const std::string& path, const std::string& format,
                                       store::Upload& up, const std::atomic<bool>* cancel) {
  motion::OutputSink sink = [&up, cancel](std::string_view chunk) {
    if (cancel && cancel->load()) return false;  // the pool is stopping: end the conversion
    auto s =
        up.write(core::Bytes(reinterpret_cast<const std::uint8_t*>(chunk.data()), chunk.size()));
    return s.ok();
  };
  if (format == "fbx" || format == "gltf" || format == "glb") {
    auto m = motion::load_assimp_motion_file(path);
    if (!m) return std::move(m).error();
    motion::ConvertOptions opts;
    auto r = motion::convert_assimp_motion(*m, opts, sink);
    if (!r) return std::move(r).error();
    return NdjsonOut{r->frames, r->fps};
  }
  auto file = core::MappedFile::open(path);
  if (!file) return std::move(file).error();
  auto bytes = file->bytes();
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (format == "json") {
    auto r = motion::convert_keypoint_json(text, {}, sink);
    if (!r) return std::move(r).error();
    return NdjsonOut{r->frames, r->fps};
  }
  if (format == "bvh") {
    motion::ConvertOptions opts;
    opts.hints = &*file;
    auto r = motion::convert_bvh(text, opts, sink);
    if (!r) return std::move(r).error();
    return NdjsonOut{r->frames, r->fps};
  }
  return core::make_error("MOTION_FORMAT", "no preprocessing for motion format '" + format + "'");
}

bool cancelled(const std::atomic<bool>* cancel) {
  return cancel && cancel->load();
}

Status cancelled_error() {
  return core::make_error(std::string(kJobCancelled), "the worker is stopping");
}

Status preprocess_motion(std::int64_t id, const store::BlobStore& blobs, store::Catalogue& cat,
                         const std::atomic<bool>* cancel) {
  auto got = cat.get_motion(id);
  if (!got) return std::move(got).error();
  if (!*got) return core::Ok{};  // deleted meanwhile: nothing to do
  store::Motion m = std::move(**got);
  auto asset = asset_of(cat, m.asset_id);
  if (!asset) return std::move(asset).error();

  if (cancelled(cancel)) return cancelled_error();
  m.preprocess_state = store::PreprocessState::running;
  m.error.clear();
  if (auto u = cat.update_motion(m); !u) return std::move(u).error();
  // Stopped mid-way: the motion is back to pending, as its job will be.
  auto back_to_pending = [&]() -> Status {
    m.preprocess_state = store::PreprocessState::pending;
    m.error.clear();
    if (auto u = cat.update_motion(m); !u) return std::move(u).error();
    return cancelled_error();
  };

  auto fail = [&](const core::Error& e) -> Status {
    m.preprocess_state = store::PreprocessState::failed;
    m.error = error_text(e);
    auto u = cat.update_motion(m);
    if (!u) return std::move(u).error();
    remove_orphans(blobs, u->orphans);
    return core::Ok{};
  };

  auto up = blobs.begin_upload(store::Kind::keypoints, "ndjson");
  if (!up) return fail(up.error());
  auto src = blobs.local_file(asset->storage_key);  // S3: a downloaded copy
  auto out = src ? convert_motion(src->path().string(), m.format, *up, cancel)
                 : core::Result<NdjsonOut>(src.error());
  if (!out) {
    up->abort();
    if (cancelled(cancel)) return back_to_pending();
    return fail(out.error());
  }
  if (cancelled(cancel)) {  // converted, but stop() came first: keep nothing half-recorded
    up->abort();
    return back_to_pending();
  }
  auto blob = up->commit();
  if (!blob) return fail(blob.error());
  store::NewAsset na{blob->sha256,
                     store::Kind::keypoints,
                     "ndjson",
                     blob->size,
                     asset->original_name + ".keypoints.ndjson",
                     blob->key};
  auto kp = cat.put_asset(na);
  if (!kp) return fail(kp.error());
  m.keypoints_asset_id = kp->record.id;
  m.frames = static_cast<std::int64_t>(out->frames);
  m.fps = out->fps;
  m.duration_s = out->fps > 0 ? static_cast<double>(out->frames) / out->fps : 0.0;
  m.preprocess_state = store::PreprocessState::done;
  auto u = cat.update_motion(m);
  if (!u) return std::move(u).error();
  remove_orphans(blobs, u->orphans);
  return core::Ok{};
}

// ---- package.validate -------------------------------------------------------

std::string version_text(std::optional<int> minor) {
  return minor ? "1." + std::to_string(*minor) : std::string();
}

Status validate_package(std::int64_t id, const store::BlobStore& blobs, store::Catalogue& cat) {
  auto got = cat.get_package(id);
  if (!got) return std::move(got).error();
  if (!*got) return core::Ok{};
  store::Package p = std::move(**got);
  auto asset = asset_of(cat, p.asset_id);
  if (!asset) return std::move(asset).error();
  auto local = blobs.local_file(asset->storage_key);  // S3: a downloaded copy
  auto file = local ? core::MappedFile::open(local->path().string())
                    : core::Result<core::MappedFile>(local.error());
  Json report = Json::object();
  if (!file) {
    p.validity = store::Validity::invalid;
    report["valid"] = false;
    report["ioError"] = Json{{"code", file.error().code}, {"message", file.error().message}};
  } else {
    bem::ValidateOptions options;
    options.input_hints = &*file;
    bem::ValidationResult r = bem::validate_package(file->bytes(), options);
    const bem::ValidationSummary& s = r.summary;
    bool opened = s.kind != bem::ContainerKind::kBinary || s.declared_minor.has_value();
    p.container = opened ? std::string(bem::container_kind_name(s.kind)) : asset->ext;
    bool single = opened && s.kind != bem::ContainerKind::kCollection;
    p.bem_version = single ? version_text(s.effective_minor) : std::string();
    p.validity = r.valid() ? store::Validity::valid : store::Validity::invalid;
    report["container"] = p.container;
    report["declaredVersion"] =
        s.declared_minor ? Json(version_text(s.declared_minor)) : Json(nullptr);
    report["effectiveVersion"] = single ? Json(version_text(s.effective_minor)) : Json(nullptr);
    report["neededVersion"] = single ? Json(version_text(s.needed_minor)) : Json(nullptr);
    report["payloadCount"] = s.payload_count;
    report["valid"] = r.valid();
    report["issues"] = Json::parse(r.report.to_json_issues());
    Json members = Json::array();
    for (const auto& mem : s.members)
      members.push_back(Json{{"name", mem.name},
                             {"effectiveVersion", version_text(mem.effective_minor)},
                             {"valid", !mem.report.has_errors()},
                             {"issues", Json::parse(mem.report.to_json_issues())}});
    report["members"] = std::move(members);
  }
  p.report_json = core::dump_json(report);
  auto u = cat.update_package(p);
  if (!u) return std::move(u).error();
  return core::Ok{};
}

// ---- model.intake -----------------------------------------------------------

Status intake_model(std::int64_t id, const store::BlobStore& blobs, store::Catalogue& cat) {
  auto got = cat.get_model(id);
  if (!got) return std::move(got).error();
  if (!*got) return core::Ok{};
  store::Model m = std::move(**got);
  auto asset = asset_of(cat, m.asset_id);
  if (!asset) return std::move(asset).error();
  auto local = blobs.local_file(asset->storage_key);  // S3: a downloaded copy
  auto info = local ? scene::inspect_model_file(local->path().string())
                    : core::Result<scene::ModelInfo>(local.error());
  if (!info) {
    m.intake_state = store::PreprocessState::failed;
    m.error = error_text(info.error());
  } else {
    m.intake_state = store::PreprocessState::done;
    m.error.clear();
    m.skinned = info->skinned;
    if (info->vrm) {
      m.vrm_version = info->vrm->version;
      m.humanoid_bones = static_cast<std::int64_t>(info->vrm->humanoid_bones);
      m.name = info->vrm->title;
    }
  }
  auto u = cat.update_model(m);
  if (!u) return std::move(u).error();
  return core::Ok{};
}

}  // namespace

std::string job_payload(std::int64_t id) {
  return core::dump_json(Json{{"id", id}});
}

Status run_job(std::string_view kind, std::string_view payload, const store::BlobStore& blobs,
               store::Catalogue& catalogue, const std::atomic<bool>* cancel) {
  auto id = payload_id(payload);
  if (!id) return std::move(id).error();
  if (cancelled(cancel)) return cancelled_error();
  try {
    if (kind == kJobMotionPreprocess) return preprocess_motion(*id, blobs, catalogue, cancel);
    if (kind == kJobPackageValidate) return validate_package(*id, blobs, catalogue);
    if (kind == kJobModelIntake) return intake_model(*id, blobs, catalogue);
  } catch (const std::exception& e) {
    return core::make_error("JOB_EXCEPTION", e.what());
  }
  return core::make_error("JOB_KIND", "unknown job kind '" + std::string(kind) + "'");
}

// ---- the pool ---------------------------------------------------------------

struct WorkerPool::Impl {
  WorkerPoolOptions options;
  std::vector<std::thread> threads;
  std::mutex mutex;
  std::condition_variable wake;
  std::atomic<bool> stopping{false};
  std::uint64_t generation = 0;  // bumped by notify()

  void log(const std::string& line) const {
    if (options.log) options.log(line);
  }

  void run(unsigned index, std::unique_ptr<store::Catalogue> cat, store::BlobStore blobs) {
    store::JobQueue queue(*cat);
    std::string worker =
        options.name + "-" + std::to_string(::getpid()) + "-" + std::to_string(index);
    while (!stopping.load()) {
      std::uint64_t seen = 0;
      {
        std::lock_guard lock(mutex);
        seen = generation;
      }
      auto job = queue.claim(worker, options.lease);
      if (job && *job) {
        const store::Job& j = **job;
        Status s = options.runner ? options.runner(j, stopping)
                                  : run_job(j.kind, j.payload, blobs, *cat, &stopping);
        if (s) {
          (void)queue.complete(j);
          log("job " + std::to_string(j.id) + " " + j.kind + " done");
        } else if (s.error().code == kJobCancelled) {
          // Graceful stop: back to the queue, the attempt not counted.
          auto r = queue.release(j);
          if (r)
            log("job " + std::to_string(j.id) + " " + j.kind + " returned to the queue");
          else
            log("job " + std::to_string(j.id) + " release failed: " + error_text(r.error()));
        } else {
          (void)queue.fail(j, error_text(s.error()));
          log("job " + std::to_string(j.id) + " " + j.kind + " failed: " + error_text(s.error()));
        }
        continue;
      }
      if (!job) log("job claim failed: " + error_text(job.error()));
      std::unique_lock lock(mutex);
      wake.wait_for(lock, options.idle_poll, [&] { return stopping.load() || generation != seen; });
    }
  }
};

core::Result<std::unique_ptr<WorkerPool>> WorkerPool::start(WorkerPoolOptions options) {
  std::unique_ptr<WorkerPool> pool(new WorkerPool());
  pool->impl_ = std::make_unique<Impl>();
  Impl& impl = *pool->impl_;
  impl.options = std::move(options);
  store::BlobStoreOptions bo;
  bo.max_bytes = std::max<std::uint64_t>(impl.options.max_upload_bytes, 1);
  // Keypoint files may be larger than an upload: allow the default maximum at least.
  bo.max_bytes = std::max(bo.max_bytes, store::kDefaultMaxUploadBytes);
  auto blobs = store::BlobStore::open(impl.options.blob_root, bo);
  if (!blobs) return std::move(blobs).error();
  for (unsigned i = 0; i < impl.options.threads; ++i) {
    store::CatalogueOptions co;
    co.pg_schema = impl.options.pg_schema;
    auto cat = store::Catalogue::open(impl.options.db_url, co);
    if (!cat) {
      pool->stop();
      return std::move(cat).error();
    }
    impl.threads.emplace_back([&impl, i, c = std::move(*cat), b = *blobs]() mutable {
      impl.run(i, std::move(c), std::move(b));
    });
  }
  return pool;
}

WorkerPool::~WorkerPool() {
  stop();
}

void WorkerPool::notify() {
  if (!impl_) return;
  {
    std::lock_guard lock(impl_->mutex);
    ++impl_->generation;
  }
  impl_->wake.notify_all();
}

void WorkerPool::request_stop() {
  if (!impl_) return;
  {
    std::lock_guard lock(impl_->mutex);  // no lost wake-up between a check and the wait
    impl_->stopping.store(true);
  }
  impl_->wake.notify_all();
}

void WorkerPool::stop() {
  if (!impl_) return;
  request_stop();
  for (auto& t : impl_->threads)
    if (t.joinable()) t.join();
  impl_->threads.clear();
}

}  // namespace charkit::server
