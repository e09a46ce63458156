// FBX models through Assimp, in a child process (detail/fbx_import.h).
// Built with CHARKIT_WITH_ASSIMP only; disabled/fbx_import.cpp stands in
// without it (docs/building.md, "Optional dependencies").
#include "charkit/scene/detail/fbx_import.h"

#include <assimp/scene.h>

#include <algorithm>
#include <array>
#include <assimp/Importer.hpp>
#include <functional>
#include <set>
#include <string>
#include <utility>

#include "charkit/core/bytes.h"
#include "charkit/core/error_codes.h"
#include "charkit/core/isolated.h"
#include "charkit/core/json.h"
#include "charkit/scene/error_codes.h"

namespace charkit::scene::detail {

namespace {

using core::Json;

core::Error at_start(core::Error e) {
  e.location = core::Location::at_offset(0);
  return e;
}

/// What the child makes of the imported scene: a compact answer (bytes) that
/// the parent decodes. It runs in the child, so it may use the scene freely
/// but must not touch the parent's state.
using FbxSummary = std::function<core::Result<std::vector<std::uint8_t>>(const aiScene&)>;

core::Result<std::vector<std::uint8_t>> import_fbx_isolated(core::Bytes fbx,
                                                            const FbxSummary& summarise) {
  auto answer = core::run_isolated(
      [&]() -> core::Result<std::vector<std::uint8_t>> {
        Assimp::Importer importer;
        const aiScene* s = importer.ReadFileFromMemory(fbx.data(), fbx.size(), 0, "fbx");
        if (!s)
          return core::make_error(codes::FBX_IMPORT, std::string("Assimp cannot read the FBX: ") +
                                                         importer.GetErrorString());
        return summarise(*s);
      },
      core::IsolationLimits{}, "the Assimp FBX import");
  if (answer) return answer;
  if (core::is_isolation_error(answer.error()))
    return core::error_at_offset(codes::FBX_IMPORT,
                                 "Assimp could not read the FBX: " + answer.error().message, 0);
  return at_start(std::move(answer).error());
}

// What intake reports of an FBX, as counts and the generator's name.
core::Result<std::vector<std::uint8_t>> counts_answer(const aiScene& scene) {
  const aiScene* s = &scene;
  std::uint64_t vertices = 0, triangles = 0, morphs = 0, skins = 0;
  std::set<std::string> bones;
  for (unsigned m = 0; m < s->mNumMeshes; ++m) {
    const aiMesh* mesh = s->mMeshes[m];
    vertices += mesh->mNumVertices;
    for (unsigned f = 0; f < mesh->mNumFaces; ++f)
      if (mesh->mFaces[f].mNumIndices >= 3) triangles += mesh->mFaces[f].mNumIndices - 2;
    for (unsigned k = 0; k < mesh->mNumBones; ++k) bones.insert(mesh->mBones[k]->mName.C_Str());
    morphs += mesh->mNumAnimMeshes;
    skins += mesh->mNumBones > 0 ? 1 : 0;
  }
  std::function<std::size_t(const aiNode*, int)> count_nodes = [&](const aiNode* n,
                                                                   int depth) -> std::size_t {
    if (!n || depth > 1000) return 0;
    std::size_t c = 1;
    for (unsigned k = 0; k < n->mNumChildren; ++k) c += count_nodes(n->mChildren[k], depth + 1);
    return c;
  };
  std::string generator;
  if (s->mMetaData) {
    aiString app;
    if (s->mMetaData->Get("Original_ApplicationName", app)) generator = app.C_Str();
  }
  core::ByteWriter w;
  for (std::uint64_t v :
       {std::uint64_t{s->mNumMeshes}, std::uint64_t{s->mNumMaterials},
        std::uint64_t{s->mNumTextures}, std::uint64_t{s->mNumAnimations}, vertices, triangles,
        morphs, std::uint64_t{bones.size()}, skins, std::uint64_t{count_nodes(s->mRootNode, 0)}})
    w.write(v);
  w.write_string(generator.substr(0, 4096));
  return core::Result<std::vector<std::uint8_t>>(std::move(w).take());
}

// The details `model inspect` shows, as JSON text.
core::Result<std::vector<std::uint8_t>> details_answer(const aiScene& scene) {
  const aiScene* s = &scene;
  Json out = Json::object();
  Json nodes = Json::array();
  std::function<void(const aiNode*, Json, int)> walk = [&](const aiNode* n, Json parent,
                                                           int depth) {
    if (!n || depth > 1000 || nodes.size() > 1000000) return;
    const std::size_t me = nodes.size();
    nodes.push_back(Json{{"index", me},
                         {"name", n->mName.C_Str()},
                         {"parent", parent},
                         {"children", Json::array()},
                         {"mesh", n->mNumMeshes > 0 ? Json(n->mMeshes[0]) : Json(nullptr)},
                         {"skin", nullptr}});
    for (unsigned k = 0; k < n->mNumChildren; ++k) {
      nodes[me]["children"].push_back(nodes.size());
      walk(n->mChildren[k], me, depth + 1);
    }
  };
  walk(s->mRootNode, nullptr, 0);
  out["nodes"] = std::move(nodes);
  Json meshes = Json::array(), skins = Json::array();
  for (unsigned m = 0; m < s->mNumMeshes; ++m) {
    const aiMesh* mesh = s->mMeshes[m];
    std::uint64_t tris = 0;
    for (unsigned f = 0; f < mesh->mNumFaces; ++f)
      if (mesh->mFaces[f].mNumIndices >= 3) tris += mesh->mFaces[f].mNumIndices - 2;
    Json bounds = nullptr;
    for (unsigned v = 0; v < mesh->mNumVertices; ++v) {
      const std::array<double, 3> x{mesh->mVertices[v].x, mesh->mVertices[v].y,
                                    mesh->mVertices[v].z};
      if (v == 0) bounds = Json{{"min", x}, {"max", x}};
      for (std::size_t i = 0; i < 3; ++i) {
        bounds["min"][i] = std::min(bounds["min"][i].get<double>(), x[i]);
        bounds["max"][i] = std::max(bounds["max"][i].get<double>(), x[i]);
      }
    }
    Json targets = Json::array();
    for (unsigned k = 0; k < mesh->mNumAnimMeshes; ++k)
      targets.push_back(mesh->mAnimMeshes[k]->mName.length > 0
                            ? std::string(mesh->mAnimMeshes[k]->mName.C_Str())
                            : "target_" + std::to_string(k));
    meshes.push_back(Json{{"index", m},
                          {"name", mesh->mName.C_Str()},
                          {"primitives", Json::array({Json{{"mode", "TRIANGLES"},
                                                           {"vertices", mesh->mNumVertices},
                                                           {"triangles", tris},
                                                           {"indexed", true},
                                                           {"material", mesh->mMaterialIndex},
                                                           {"attributes", Json::array()}}})},
                          {"vertices", mesh->mNumVertices},
                          {"triangles", tris},
                          {"morphTargets", std::move(targets)},
                          {"bounds", std::move(bounds)}});
    if (mesh->mNumBones > 0) {
      Json joints = Json::array();
      for (unsigned k = 0; k < mesh->mNumBones; ++k)
        joints.push_back(mesh->mBones[k]->mName.C_Str());
      skins.push_back(Json{{"index", skins.size()},
                           {"name", mesh->mName.C_Str()},
                           {"skeleton", nullptr},
                           {"joints", std::move(joints)}});
    }
  }
  out["meshes"] = std::move(meshes);
  out["skins"] = std::move(skins);
  Json mats = Json::array();
  for (unsigned m = 0; m < s->mNumMaterials; ++m) {
    aiString name;
    s->mMaterials[m]->Get(AI_MATKEY_NAME, name);
    mats.push_back(Json{{"index", m}, {"name", name.C_Str()}});
  }
  out["materials"] = std::move(mats);
  Json tex = Json::array();
  for (unsigned t = 0; t < s->mNumTextures; ++t)
    tex.push_back(Json{{"index", t},
                       {"name", s->mTextures[t]->mFilename.C_Str()},
                       {"image", nullptr},
                       {"imageName", nullptr},
                       {"mimeType", nullptr}});
  out["textures"] = std::move(tex);
  Json anims = Json::array();
  for (unsigned a = 0; a < s->mNumAnimations; ++a) {
    const aiAnimation* an = s->mAnimations[a];
    const double tps = an->mTicksPerSecond > 0 ? an->mTicksPerSecond : 25.0;
    anims.push_back(Json{{"index", a},
                         {"name", an->mName.C_Str()},
                         {"duration", std::isfinite(an->mDuration) ? an->mDuration / tps : 0.0},
                         {"channels", an->mNumChannels + an->mNumMorphMeshChannels},
                         {"samplers", nullptr}});
  }
  out["animations"] = std::move(anims);
  out["humanoid"] = nullptr;
  const std::string text = out.dump(-1, ' ', false, Json::error_handler_t::replace);
  return core::Result<std::vector<std::uint8_t>>(
      std::vector<std::uint8_t>(text.begin(), text.end()));
}

}  // namespace

core::Result<std::vector<std::uint8_t>> import_fbx_counts(core::Bytes fbx) {
  return import_fbx_isolated(fbx, counts_answer);
}

core::Result<std::vector<std::uint8_t>> import_fbx_details(core::Bytes fbx) {
  return import_fbx_isolated(fbx, details_answer);
}

}  // namespace charkit::scene::detail
