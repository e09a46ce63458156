#!/usr/bin/env python3
"""Keeps charkit's modules layered one way, and the layer tables true.

The order is the table "Modules, bottom to top" in docs/architecture.md: a
module may link and include only modules in rows above its own. Fails (exit 1,
one line per problem, FILE:LINE first where there is one) when
  (a) a module links a module that is not above it in that table, or a
      module its row does not list under "uses" (or its row lists one it
      does not link);
  (b) a source or header of a module (src/charkit/<module>/, detail/
      included) includes `charkit/<other>/…` where <other> is not the module
      itself nor one it links, directly or through the modules they link;
  (c) the table "Modules and their dependencies" in docs/library.md gives a
      module other charkit components than it links;
  (d) a module has no row in the architecture table, or a row names a
      module that does not exist.

What a module links: the COMPONENTS of its charkit_module() call and any
charkit_<module> target in a target_link_libraries(charkit_<module> …) of
its CMakeLists.txt (the C API, libcharkit_c, is the module `capi`). The
program (apps/charkit, row `apps/charkit`) may include every module.

Usage: check_layers.py --root REPO
       check_layers.py --selftest
"""
import argparse
import os
import re
import sys
import tempfile

KEYWORDS = {'SOURCES', 'COMPONENTS', 'PUBLIC', 'PRIVATE', 'FIND', 'PKG'}
INCLUDE = re.compile(r'^\s*#\s*include\s*"charkit/([a-z_0-9]+)/', re.M)
TABLE_ROW = re.compile(r'^\|\s*`([^`]+)`\s*\|(.*)\|\s*$')


def module_links(cmake_text, module):
    """The charkit modules `module`'s CMakeLists.txt links."""
    links = set()
    m = re.search(r'charkit_module\(\s*' + re.escape(module) + r'\b(.*?)\)', cmake_text, re.S)
    if m:
        # Quoted arguments ("OpenSSL COMPONENTS Crypto") are one word each.
        words = re.findall(r'"[^"]*"|[^\s"]+', m.group(1))
        on = False
        for w in words:
            if w.startswith('"'):
                continue
            if w in KEYWORDS:
                on = w == 'COMPONENTS'
            elif on:
                links.add(w)
    target = 'charkit_c' if module == 'capi' else 'charkit_' + module
    for t in re.finditer(r'target_link_libraries\(\s*' + re.escape(target) + r'\b(.*?)\)',
                         cmake_text, re.S):
        for dep in re.findall(r'\bcharkit_([a-z]+)\b', t.group(1)):
            if dep not in ('warnings', 'c'):
                links.add(dep)
    return links


def read_table(path, header_word):
    """Rows of the first Markdown table after a heading containing
    `header_word`: [(line number, first cell, other cells)]."""
    rows = []
    lines = open(path, encoding='utf-8').read().split('\n')
    start = None
    for i, line in enumerate(lines):
        if line.startswith('#') and header_word in line:
            start = i
            break
    if start is None:
        return rows
    in_table = False
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if line.startswith('|'):
            in_table = True
            m = TABLE_ROW.match(line)
            if m:
                cells = [c.strip() for c in m.group(2).split('|')]
                rows.append((i + 1, m.group(1), cells))
        elif in_table:
            break
        elif line.startswith('#'):
            break
    return rows


def names_in(cell):
    """The module names a table cell lists ("core, gpu", "—")."""
    return {w for w in re.split(r'[,\s]+', cell.replace('`', '')) if re.fullmatch(r'[a-z]+', w)}


def check(root):
    problems = []
    src = os.path.join(root, 'src', 'charkit')
    modules = sorted(d for d in os.listdir(src)
                     if os.path.isfile(os.path.join(src, d, 'CMakeLists.txt')))
    links = {}
    for m in modules:
        with open(os.path.join(src, m, 'CMakeLists.txt'), encoding='utf-8') as f:
            links[m] = module_links(f.read(), m)

    arch = os.path.join(root, 'docs', 'architecture.md')
    rows = read_table(arch, 'bottom to top')
    order = [name for _, name, _ in rows]
    rel_arch = os.path.relpath(arch, root)
    for line, name, cells in rows:
        if name != 'apps/charkit' and name not in links:
            problems.append(f'{rel_arch}:{line}: the row `{name}` names no module of src/charkit')
    for m in modules:
        if m not in order:
            problems.append(f'{rel_arch}: module {m} has no row in the table "Modules, bottom to top"')

    # (a) links point down and match the row's "uses".
    for line, name, cells in rows:
        if name not in links:
            continue
        uses = names_in(cells[-1])
        for dep in sorted(links[name]):
            if dep not in order or order.index(dep) >= order.index(name):
                problems.append(f'src/charkit/{name}/CMakeLists.txt: {name} links {dep}, '
                                f'which is not above it in {rel_arch}\'s table')
        if uses != links[name]:
            problems.append(f'{rel_arch}:{line}: `{name}` uses {sorted(uses)} in the table '
                            f'but links {sorted(links[name])}')

    # (b) includes stay within what a module links.
    def closure(m, seen=None):
        seen = set() if seen is None else seen
        for d in links.get(m, ()):
            if d not in seen:
                seen.add(d)
                closure(d, seen)
        return seen

    for m in modules:
        allowed = closure(m) | {m}
        for dirpath, dirnames, filenames in os.walk(os.path.join(src, m)):
            dirnames.sort()
            for fname in sorted(filenames):
                if not fname.endswith(('.h', '.cpp', '.def')):
                    continue
                path = os.path.join(dirpath, fname)
                text = open(path, encoding='utf-8').read()
                for inc in INCLUDE.finditer(text):
                    other = inc.group(1)
                    if other in links and other not in allowed:
                        line = text.count('\n', 0, inc.start()) + 1
                        problems.append(f'{os.path.relpath(path, root)}:{line}: {m} includes '
                                        f'charkit/{other}/, a module it does not link')

    # (c) docs/library.md's dependency table.
    lib = os.path.join(root, 'docs', 'library.md')
    rel_lib = os.path.relpath(lib, root)
    for line, name, cells in read_table(lib, 'Modules and their dependencies'):
        if name not in links:
            problems.append(f'{rel_lib}:{line}: the row `{name}` names no module of src/charkit')
            continue
        listed = names_in(cells[1]) if len(cells) > 1 else set()
        if listed != links[name]:
            problems.append(f'{rel_lib}:{line}: `{name}` lists the components {sorted(listed)} '
                            f'but links {sorted(links[name])}')
    return problems


def selftest():
    """Builds a small tree with one edge of each wrong kind and expects each
    to be reported, and a clean tree to pass."""
    def tree(d, scene_links, scene_include, arch_scene_uses, lib_scene):
        os.makedirs(os.path.join(d, 'src', 'charkit', 'core'))
        os.makedirs(os.path.join(d, 'src', 'charkit', 'scene', 'detail'))
        os.makedirs(os.path.join(d, 'src', 'charkit', 'deform'))
        os.makedirs(os.path.join(d, 'docs'))
        w = lambda p, t: open(os.path.join(d, p), 'w').write(t)
        w('src/charkit/core/CMakeLists.txt', 'charkit_module(core SOURCES a.cpp PUBLIC x)\n')
        w('src/charkit/scene/CMakeLists.txt',
          f'charkit_module(scene\n  SOURCES a.cpp\n  COMPONENTS {scene_links}\n  PRIVATE z\n'
          '  FIND "OpenSSL COMPONENTS Crypto")\n')
        w('src/charkit/deform/CMakeLists.txt',
          'charkit_module(deform SOURCES a.cpp COMPONENTS core scene)\n')
        w('src/charkit/scene/detail/x.h', f'#pragma once\n#include "charkit/{scene_include}/a.h"\n')
        w('src/charkit/core/a.h', '#include "charkit/core/b.h"\n')
        w('docs/architecture.md', '# A\n## Modules, bottom to top\n\n| module | owns | uses |\n'
          '|---|---|---|\n| `core` | c | — |\n'
          f'| `scene` | s | {arch_scene_uses} |\n| `deform` | d | core, scene |\n'
          '| `apps/charkit` | p | all of the above |\n')
        w('docs/library.md', '## Modules and their dependencies\n\n| C | W | charkit | t |\n'
          '|---|---|---|---|\n| `core` | c | — | x |\n'
          f'| `scene` | s | {lib_scene} | y |\n| `deform` | d | core, scene | — |\n')

    cases = [
        (('core', 'core', 'core', 'core'), []),
        (('core deform', 'core', 'core, deform', 'core, deform'), ['not above it']),
        (('core', 'deform', 'core', 'core'), ['a module it does not link']),
        (('core', 'core', 'core, deform', 'core'), ['in the table but links']),
        (('core', 'core', 'core', 'core, deform'), ['lists the components']),
    ]
    failed = 0
    for args, expected in cases:
        with tempfile.TemporaryDirectory() as d:
            tree(d, *args)
            got = check(d)
            if expected == [] and got:
                print('selftest: a clean tree reported', got)
                failed += 1
            for e in expected:
                if not any(e in g for g in got):
                    print(f'selftest: {args}: expected a problem with "{e}", got {got}')
                    failed += 1
    print('selftest:', 'FAILED' if failed else 'ok')
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--root')
    ap.add_argument('--selftest', action='store_true')
    a = ap.parse_args()
    if a.selftest:
        return selftest()
    if not a.root:
        ap.error('--root is required')
    problems = check(a.root)
    for p in problems:
        print(p)
    print(f'check_layers: {len(problems)} problem(s)')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
