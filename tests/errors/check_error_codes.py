#!/usr/bin/env python3
"""Keeps charkit's error codes, their declarations and docs/errors.md in step.

Fails (exit 1, one line per problem, FILE:LINE first) when
  (a) a code-shaped string literal in src/ or apps/ is not declared in any
      error_codes.def;
  (b) docs/errors.md differs from `charkit errors --markdown` (the generator),
      naming the codes missing from or extra in the docs;
  (c) a code is declared twice (in one .def or in two);
  (d) behaviour compares an error code with a string literal
      (`code == "X"`, `code != "X"`, `code.starts_with("X")`, `code.rfind("X"`)
      instead of a declared constant (charkit/<module>/error_codes.h); the
      family predicates in src/charkit/core/error_codes.cpp are exempt.

The scan (a): every C++ string literal in src/**/*.{h,cpp} and
apps/**/*.{h,cpp} (comments included; .def files excluded) that matches
    "[A-Z][A-Z0-9]*(_[A-Z0-9]+)+"
i.e. upper-case words joined by underscores, such as "BEM_HEADER_MAGIC";
and a one-word literal ("USAGE", "FORBIDDEN") where a code is raised: the
first argument of make_error, the code argument of the CLI's report_error
and report_warning and of the server's error_reply.
Such a literal is an error or issue code unless it is one of these
exclusions (strings of other vocabularies that look alike):
  - glTF attribute semantics: (JOINTS|WEIGHTS|COLOR|TEXCOORD)_<n>;
  - environment variable names in NOT_CODES below (AWS credentials);
  - any literal on a line that carries the comment `not-an-error-code`
    (for a new look-alike string; prefer declaring real codes).

Usage: check_error_codes.py --root REPO [--charkit PATH/TO/charkit]
       check_error_codes.py --selftest
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

CODE_LITERAL = re.compile(r'"([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)"')
DECLARATION = re.compile(r'^\s*CHARKIT_ERROR\(\s*([A-Za-z0-9_]+)\s*,', re.M)
GLTF_SEMANTIC = re.compile(r'^(JOINTS|WEIGHTS|COLOR|TEXCOORD)_\d+$')
NOT_CODES = {'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'}
LINE_MARK = 'not-an-error-code'
# (d) exemption: the family predicates (core::is_io_error, is_isolation_error)
# are the one place where a code is tested by its prefix.
COMPARE_EXEMPT = {os.path.join('src', 'charkit', 'core', 'error_codes.cpp')}
# (d): a code member or accessor compared with, or prefix-tested against, a literal.
LITERAL_COMPARE = re.compile(
    r'\bcode(?:\(\))?\s*(?:[!=]=\s*"|\.(?:starts_with|rfind|find|compare)\(\s*")'
    r'|"\s*[!=]=\s*[\w.>()-]*\bcode\b')
# A one-word code where one is raised (one-word literals elsewhere are glTF
# types, HTTP methods and the like).
RAISED_WORD = re.compile(
    r'\bmake_error\(\s*"([A-Z][A-Z0-9]+)"'
    r'|\b(?:report_error|report_warning|error_reply)\((?:[^;"(]|"[^"]*")*?,\s*"([A-Z][A-Z0-9]+)"')
DOC_ROW = re.compile(r'^\| `([A-Z0-9_]+)` \|', re.M)


def sources(root):
    for top in ('src', 'apps'):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for f in sorted(filenames):
                if f.endswith(('.cpp', '.h')):
                    yield os.path.join(dirpath, f)


def def_files(root):
    found = []
    for top in ('src', 'apps'):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            if 'error_codes.def' in filenames:
                found.append(os.path.join(dirpath, 'error_codes.def'))
    return sorted(found)


def declaration_file_for(root, path):
    """Where a code found in `path` belongs: its module's error_codes.def."""
    rel = os.path.relpath(path, root).split(os.sep)
    if rel[0] == 'src' and len(rel) > 3:
        return f'src/charkit/{rel[2]}/error_codes.def'
    return 'apps/charkit/error_codes.def'


def check(root, charkit):
    problems = []
    rel = lambda p: os.path.relpath(p, root)
    declared = {}  # code -> "file:line"
    for path in def_files(root):
        text = open(path, encoding='utf-8').read()
        for m in DECLARATION.finditer(text):
            where = f'{rel(path)}:{text.count(chr(10), 0, m.start()) + 1}'
            code = m.group(1)
            if code in declared:
                problems.append(f'{where}: error code {code} is declared twice '
                                f'(first at {declared[code]})')
            else:
                declared[code] = where
    if not declared:
        problems.append(f'{root}: no error_codes.def declarations found')

    for path in sources(root):
        with open(path, encoding='utf-8') as f:
            for n, line in enumerate(f, 1):
                if LINE_MARK in line:
                    continue
                found = [m.group(1) for m in CODE_LITERAL.finditer(line)]
                found += [m.group(1) or m.group(2) for m in RAISED_WORD.finditer(line)]
                for code in found:
                    if code in declared or code in NOT_CODES or GLTF_SEMANTIC.match(code):
                        continue
                    problems.append(f'{rel(path)}:{n}: undeclared error code {code}: declare it '
                                    f'once in {declaration_file_for(root, path)} '
                                    f'(CHARKIT_ERROR({code}, "meaning", "what the user can do")) '
                                    f'and regenerate docs/errors.md')
                if LITERAL_COMPARE.search(line) and rel(path) not in COMPARE_EXEMPT:
                    problems.append(f'{rel(path)}:{n}: an error code is compared with a string '
                                    f'literal; compare with the declared constant '
                                    f'(charkit/<module>/error_codes.h) instead: {line.strip()}')

    if charkit:
        docs_path = os.path.join(root, 'docs', 'errors.md')
        docs = open(docs_path, encoding='utf-8').read() if os.path.exists(docs_path) else ''
        out = subprocess.run([charkit, 'errors', '--markdown'], capture_output=True, text=True)
        if out.returncode != 0:
            problems.append(f'{charkit} errors --markdown failed: {out.stderr.strip()}')
        generated = out.stdout
        in_docs = DOC_ROW.findall(docs)
        in_table = DOC_ROW.findall(generated)
        for code in sorted(set(declared) - set(in_docs)):
            problems.append(f'docs/errors.md: declared code {code} ({declared[code]}) is missing')
        for code in sorted(set(in_docs) - set(declared)):
            problems.append(f'docs/errors.md: code {code} is not declared in any error_codes.def')
        for code in sorted(set(declared) - set(in_table)):
            problems.append(f'{declared[code]}: code {code} is declared but `charkit errors` does '
                            f'not list it (is its module\'s error_codes.def included in '
                            f'src/charkit/core/error_codes.cpp?)')
        if docs != generated:
            a, b = docs.splitlines(), generated.splitlines()
            first = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
            problems.append(f'docs/errors.md:{first + 1}: differs from the declarations; regenerate '
                            f'it: {charkit} errors --markdown > docs/errors.md')
    return problems


def selftest():
    """The checker finds each kind of problem in a small made-up tree."""
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(f'{root}/src/charkit/core')
        os.makedirs(f'{root}/src/charkit/scene')
        os.makedirs(f'{root}/apps/charkit')
        open(f'{root}/src/charkit/core/error_codes.def', 'w').write(
            'CHARKIT_ERROR(IO_OPEN, "m", "r")\nCHARKIT_ERROR(JSON_SYNTAX, "m", "r")\n')
        open(f'{root}/apps/charkit/error_codes.def', 'w').write('CHARKIT_ERROR(JSON_SYNTAX, "m", "r")\n')
        open(f'{root}/src/charkit/scene/gltf.cpp', 'w').write(
            'auto a = make_error("IO_OPEN", "x");\n'
            'auto b = make_error("GLTF_BAD_STRIDE", "x");\n'
            'report_error(file, "USAGE", "x", 2); if (type == "VEC3") {}\n'
            'attrs["TEXCOORD_1"] = 1; env("AWS_SESSION_TOKEN");\n'
            'auto c = "SOME_NAME";  // not-an-error-code\n'
            'if (e.code == "IO_OPEN") {}\n'
            'if (e.code.starts_with("IO_")) {}\n'
            'if (e.code == core::codes::IO_OPEN) {}\n')
        got = check(root, None)
        want = [
            'src/charkit/core/error_codes.def:2: error code JSON_SYNTAX is declared twice',
            'src/charkit/scene/gltf.cpp:2: undeclared error code GLTF_BAD_STRIDE: declare it once '
            'in src/charkit/scene/error_codes.def',
            'src/charkit/scene/gltf.cpp:3: undeclared error code USAGE: declare it once '
            'in src/charkit/scene/error_codes.def',
            'src/charkit/scene/gltf.cpp:6: an error code is compared with a string literal',
            'src/charkit/scene/gltf.cpp:7: an error code is compared with a string literal',
        ]
        ok = len(got) == len(want) and all(g.startswith(w) for g, w in zip(sorted(got), sorted(want)))
        if not ok:
            print('selftest: expected\n  ' + '\n  '.join(sorted(want)) + '\ngot\n  ' +
                  '\n  '.join(sorted(got)))
            return 1
        print('selftest: ok')
        return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--root')
    ap.add_argument('--charkit', help='the charkit program, to compare docs/errors.md with')
    ap.add_argument('--selftest', action='store_true')
    a = ap.parse_args()
    if a.selftest:
        return selftest()
    problems = check(a.root, a.charkit)
    for p in problems:
        print(p)
    if problems:
        print(f'{len(problems)} problem(s); see tests/errors/check_error_codes.py for the rules')
        return 1
    print('error codes: declarations, sources and docs/errors.md agree')
    return 0


if __name__ == '__main__':
    sys.exit(main())
