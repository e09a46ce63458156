#!/usr/bin/env python3
"""Keeps glTF JSON inside the glTF layer.

The glTF layer is src/charkit/scene/gltf_*.{h,cpp}: GltfDocument reads the
file, read_gltf_asset turns its JSON into typed elements (scene::GltfAsset),
GltfEditor changes a loaded document and the writer builds new ones
(docs/scene.md "The glTF layer"). Everywhere else in src/ and apps/, code
reads nodes, meshes, accessors … from GltfAsset, never by indexing JSON with
glTF's own member names.

A "key lookup" is a glTF member name used as a JSON key: `["meshes"]` (not
an assignment `j["meshes"] = ...`, which writes a report of our own),
`.find("accessors")`, `.contains("targets")`, `.at("nodes")`,
`.value("mesh", …)`, `.count("skins")`, or passed to a helper that takes a
member name, `(x, "bufferView")`.

No glTF reader outside the layer is left. The check cannot tell glTF JSON
from our own JSON that uses the same member names (BEM manifests and pack
specs have "meshes", "textures", "attributes"; reports; an HTTP parameter
"targets"), so ALLOWED lists those files with their count and the reason.
The check fails (exit 1, FILE: count) for a lookup in a file not listed, or
for more lookups than a file's entry allows; when a count drops, it asks for
the entry to be lowered, so the list stays true.

Usage: check_gltf_keys.py --root REPO
       check_gltf_keys.py --selftest
"""
import argparse
import os
import re
import sys
import tempfile

KEYS = ['accessors', 'bufferViews', 'buffers', 'nodes', 'meshes', 'primitives', 'attributes',
        'targets', 'skins', 'joints', 'inverseBindMatrices', 'animations', 'channels',
        'samplers', 'materials', 'textures', 'images', 'scenes', 'bufferView', 'byteOffset',
        'byteLength', 'byteStride', 'componentType', 'extensionsUsed', 'targetNames',
        'pbrMetallicRoughness', 'baseColorTexture', 'normalTexture', 'KHR_materials_unlit']
KEY_ALT = '|'.join(re.escape(k) for k in KEYS)
LOOKUP = re.compile(
    r'(?:\[\s*"(?:' + KEY_ALT + r')"\s*\](?!\s*=[^=])'
    r'|\.(?:find|contains|at|value|count|erase)\(\s*"(?:' + KEY_ALT + r')"'
    r'|,\s*"(?:' + KEY_ALT + r')"\s*\))')

# The glTF layer itself.
LAYER = re.compile(r'^src/charkit/scene/gltf_[a-z_]+\.(?:h|cpp)$')

# File → lookups still allowed, and why. Lower a count when it drops.
ALLOWED = {
    # BEM manifests, pack specs and templates, whose members share glTF's names.
    'src/charkit/bem/pack_textures.cpp': 2,
    'apps/charkit/bem.cpp': 9,
    'src/charkit/bem/check_appearances.cpp': 1,
    'src/charkit/bem/check_draws.cpp': 1,
    'src/charkit/bem/check_meshes.cpp': 2,
    'src/charkit/bem/check_options.cpp': 3,
    'src/charkit/bem/inspect.cpp': 7,
    'src/charkit/bem/model.cpp': 4,
    'src/charkit/bem/pack.cpp': 7,
    'src/charkit/bem/pack_meshes.cpp': 2,
    'src/charkit/bem/pack_template.cpp': 16,
    # `model inspect`'s own details JSON, printed as text.
    'src/charkit/scene/model_inspect.cpp#report': 3,
    # An HTTP query parameter named "targets".
    'src/charkit/server/package_views.cpp': 1,
    # charkit_bem_pack_arrays' own scene description (meshes, attributes,
    # primitives, targets, images of numpy arrays), read into scene::Scene.
    'src/charkit/capi/c_api_bem.cpp': 6,
}


def strip_comments(text):
    """C++ text with // and /* */ comments blanked (line breaks kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        if text.startswith('//', i):
            j = text.find('\n', i)
            i = n if j < 0 else j
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append('\n' * text.count('\n', i, j))
            i = j
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == '\\' else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return ''.join(out)


def count_lookups(text):
    return len(LOOKUP.findall(strip_comments(text)))


def scan(root):
    counts = {}
    for top in ('src', 'apps'):
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if not name.endswith(('.h', '.cpp')):
                    continue
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, root).replace(os.sep, '/')
                if LAYER.match(rel):
                    continue
                with open(path, encoding='utf-8', errors='replace') as f:
                    n = count_lookups(f.read())
                if n:
                    counts[rel] = n
    return counts


def merged(allowed):
    """ALLOWED with a file's entries for different reasons (FILE#why) added up."""
    out = {}
    for key, n in allowed.items():
        rel = key.split('#')[0]
        out[rel] = out.get(rel, 0) + n
    return out


def problems(counts, allowed):
    allowed = merged(allowed)
    out = []
    for rel, n in sorted(counts.items()):
        limit = allowed.get(rel, 0)
        if n > limit:
            where = 'not listed' if rel not in allowed else f'allowed {limit}'
            out.append(f'{rel}: {n} glTF key lookups ({where}); read scene::GltfAsset instead '
                       '(docs/scene.md "The glTF layer")')
    for rel, limit in sorted(allowed.items()):
        n = counts.get(rel, 0)
        if n < limit:
            out.append(f'{rel}: {n} glTF key lookups, the list allows {limit}: lower its entry '
                       f'in tests/layers/check_gltf_keys.py to {n}')
    return out


def selftest():
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, 'src/charkit/scene'))
        os.makedirs(os.path.join(d, 'src/charkit/deformer'))
        def put(rel, text):
            with open(os.path.join(d, rel), 'w') as f:
                f.write(text)
        put('src/charkit/scene/gltf_asset.cpp', 'j["meshes"]; j.find("nodes");')
        put('src/charkit/deformer/a.cpp',
            '// j["meshes"] in a comment\nauto s = "nodes";\nout["meshes"] = 3;\n')
        put('src/charkit/deformer/b.cpp',
            'root["accessors"][i]; m.contains("targets"); index_of(x, "bufferView");\n'
            'j.value("skins", 0); /* j["nodes"] */')
        counts = scan(d)
        assert counts == {'src/charkit/deformer/b.cpp': 4}, counts
        assert len(problems(counts, {})) == 1
        assert problems(counts, {'src/charkit/deformer/b.cpp': 4}) == []
        assert 'lower its entry' in problems(counts, {'src/charkit/deformer/b.cpp': 5})[0]
        assert 'allowed 3' in problems(counts, {'src/charkit/deformer/b.cpp': 3})[0]
    print('selftest passed')
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--root')
    ap.add_argument('--selftest', action='store_true')
    args = ap.parse_args()
    if args.selftest:
        return selftest()
    if not args.root:
        ap.error('--root or --selftest')
    found = problems(scan(args.root), ALLOWED)
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main())
