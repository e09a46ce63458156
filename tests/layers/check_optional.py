#!/usr/bin/env python3
"""Keeps one way of building without an optional dependency.

charkit builds with or without Assimp, ONNX, libxsmm, the Vulkan backend,
PostgreSQL and the server (docs/building.md, "Optional dependencies"). A
source that needs one of them is listed in its CMakeLists.txt's
charkit_optional_sources() call, and its stand-in, where callers need one,
is the file of the same name in the module's disabled/ folder. Fails (exit 1,
FILE:LINE: problem) when
  (a) a source or header in src/ or apps/ tests a CHARKIT_WITH_* macro in
      a preprocessor condition (#if, #ifdef, #ifndef, #elif), or
  (b) a file in a disabled/ folder stands in for no source of the same name
      in the folder above it.

Usage: check_optional.py --root REPO
       check_optional.py --selftest
"""
import argparse
import os
import re
import sys
import tempfile

CONDITION = re.compile(r'^\s*#\s*(?:if|ifdef|ifndef|elif)\b.*\bCHARKIT_WITH_[A-Z_0-9]+', re.M)
SOURCE = re.compile(r'\.(?:h|hpp|cpp|cc|c)$')


def check(root):
    problems = []
    for top in ('src', 'apps'):
        for dirpath, _, filenames in os.walk(os.path.join(root, top)):
            for name in sorted(filenames):
                if not SOURCE.search(name):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                with open(path, encoding='utf-8', errors='replace') as f:
                    text = f.read()
                for m in CONDITION.finditer(text):
                    line = text.count('\n', 0, m.start()) + 1
                    problems.append(f'{rel}:{line}: tests {m.group(0).strip()}; list the file '
                                    'in charkit_optional_sources() and put its stand-in in '
                                    'disabled/ instead')
                if os.path.basename(dirpath) == 'disabled' and name.endswith('.cpp'):
                    if not os.path.exists(os.path.join(os.path.dirname(dirpath), name)):
                        problems.append(f'{rel}:1: stands in for ../{name}, which does not exist')
    return problems


def selftest():
    cases = [
        ({'src/m/a.cpp': 'int a;\n'}, None),
        ({'src/m/a.cpp': 'x\n#if CHARKIT_WITH_ONNX\n#endif\n'}, 'src/m/a.cpp:2: tests'),
        ({'apps/a.cpp': '#ifdef CHARKIT_WITH_SERVER\n#endif\n'}, 'apps/a.cpp:1: tests'),
        ({'src/m/a.h': '#if defined(X) && !CHARKIT_WITH_XSMM\n'}, 'src/m/a.h:1: tests'),
        ({'src/m/a.cpp': '// built with CHARKIT_WITH_ONNX only\n'}, None),
        ({'src/m/a.cpp': '', 'src/m/disabled/a.cpp': ''}, None),
        ({'src/m/disabled/b.cpp': ''}, 'src/m/disabled/b.cpp:1: stands in for ../b.cpp'),
    ]
    failed = False
    for files, want in cases:
        with tempfile.TemporaryDirectory() as d:
            for rel, text in files.items():
                os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
                with open(os.path.join(d, rel), 'w') as f:
                    f.write(text)
            got = check(d)
            ok = not got if want is None else any(p.startswith(want) for p in got)
            if not ok:
                failed = True
                print(f'selftest: {sorted(files)}: expected {want!r}, got {got}')
    print('selftest:', 'FAILED' if failed else 'ok')
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser()
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
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
