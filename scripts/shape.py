#!/usr/bin/env python3
"""The shape of the workspace's production code, as issue 22 measures it.

- a production file's lines: the lines of a file under crates/*/src but its
  inline `#[cfg(test)] mod NAME { ... }` blocks (files named *_tests.rs or
  tests.rs, and files under a tests/ folder, are test code and not counted);
- a function's lines: from its `fn` line to its closing brace;
- impl blocks across files: the types whose inherent `impl` blocks (not
  trait impls) are in more than N files (2 by default), per crate;
- methods per type: the `fn`s directly in a type's inherent `impl` blocks;
- functions near the limit: within --near lines (10) of --fns;
- import circles: the strongly connected groups (more than one file) of the
  graph "file A names an item of file B" (through `use` or a path in the
  code: `crate::`, `super::`, `self::`, or a child module), within each crate.

Usage: scripts/shape.py [--files N] [--fns N] [--near N] [--impl-files N]
       [--methods N] [--list] [--check]
"""
import os, re, sys, argparse
from collections import defaultdict

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def strip(src):
    """Source with comments, strings and char literals blanked (lines kept)."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i)); i = j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j): depth += 1; j += 2
                elif src.startswith("*/", j): depth -= 1; j += 2
                else: j += 1
            out.append(re.sub(r"[^\n]", " ", src[i:j])); i = j
        elif c == "r" and re.match(r'r#*"', src[i:i + 10]) and not (i and (src[i-1].isalnum() or src[i-1] == "_")):
            m = re.match(r'r(#*)"', src[i:]); hashes = m.group(1)
            end = src.find('"' + hashes, i + len(m.group(0)))
            end = n if end < 0 else end + 1 + len(hashes)
            out.append(re.sub(r"[^\n]", " ", src[i:end])); i = end
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", src[i:j + 1])); i = j + 1
        elif c == "'":
            m = re.match(r"'(\\.[^']*|[^\\'])'", src[i:i + 12])
            if m:
                out.append(" " * len(m.group(0))); i += len(m.group(0))
            else:
                out.append(c); i += 1
        else:
            out.append(c); i += 1
    return "".join(out)


def is_test_file(path):
    b = os.path.basename(path)
    return b.endswith("_tests.rs") or b == "tests.rs" or "/tests/" in path or "/benches/" in path


def production_text(text):
    """`text` without its inline `#[cfg(test)] mod NAME { ... }` blocks
    (lines kept blank, so line numbers hold), and how many lines are left.
    A test module declared as `mod NAME;` lives in a file of its own."""
    lines = text.split("\n")
    clean = strip(text).split("\n")
    out, k, removed = list(lines), 0, 0
    while k < len(lines):
        if lines[k].strip().startswith("#[cfg(test)]"):
            j = k + 1
            while j < len(lines) and lines[j].strip().startswith("#["):
                j += 1
            if j < len(lines) and re.match(r"^\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", clean[j]):
                depth, end = 0, j
                for end in range(j, len(lines)):
                    depth += clean[end].count("{") - clean[end].count("}")
                    if depth == 0:
                        break
                for i in range(k, end + 1):
                    out[i] = ""
                removed += end + 1 - k
                k = end + 1
                continue
        k += 1
    total = len(lines) - (1 if text.endswith("\n") else 0)
    return "\n".join(out), total - removed


FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+\"[^\"]*\"\s+)?fn\s+(\w+)")


def functions(clean):
    lines = clean.split("\n")
    found = []
    for k, line in enumerate(lines):
        m = FN.match(line)
        if not m:
            continue
        depth, started = 0, False
        for j in range(k, len(lines)):
            for ch in lines[j]:
                if ch == "{": depth += 1; started = True
                elif ch == "}": depth -= 1
                elif ch == ";" and not started and depth == 0:
                    break
            else:
                if started and depth == 0:
                    found.append((m.group(1), k + 1, j - k + 1)); break
                continue
            break
    return found


IMPL = re.compile(r"^\s*(?:unsafe\s+)?impl\b")
DEF = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:struct|enum|union|type)\s+([A-Za-z_]\w*)", re.M)


def skip_generics(text, i):
    """The index after a balanced `<...>` starting at `text[i]` (or `i`)."""
    if i >= len(text) or text[i] != "<":
        return i
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "<": depth += 1
        elif text[j] == ">" and text[j - 1] != "-":
            depth -= 1
            if depth == 0:
                return j + 1
    return len(text)


def impls(clean):
    """Each `impl` block of `clean`: (type name, trait impl or not, how
    many `fn`s it holds directly)."""
    lines = clean.split("\n")
    found = []
    for k, line in enumerate(lines):
        if not IMPL.match(line):
            continue
        # The head, up to the block's `{`.
        head, j = "", k
        while j < len(lines) and "{" not in lines[j]:
            head += lines[j] + " "; j += 1
        if j == len(lines):
            continue
        head += lines[j][: lines[j].index("{")]
        rest = head[head.index("impl") + 4:].lstrip()
        rest = rest[skip_generics(rest, 0):].strip()
        is_trait = re.search(r"\bfor\b", re.sub(r"<[^<>]*>", "", rest)) is not None
        if is_trait:
            rest = re.split(r"\bfor\b", rest, maxsplit=1)[1].strip()
        m = re.match(r"(?:&\s*(?:'\w+\s+)?(?:mut\s+)?)?(?:dyn\s+)?([A-Za-z_][\w:]*)", rest)
        if not m:
            continue
        name = m.group(1).split("::")[-1]
        # Its `fn`s at the block's own depth.
        depth, methods = 0, 0
        for t in range(j, len(lines)):
            text = lines[t] if t != j else lines[j][lines[j].index("{"):]
            if depth == 1 and FN.match(lines[t]):
                methods += 1
            depth += text.count("{") - text.count("}")
            if depth == 0:
                break
        found.append((name, is_trait, methods))
    return found


def crate_files(crate):
    src = os.path.join(crate, "src")
    for d, _, fs in os.walk(src):
        for f in fs:
            if f.endswith(".rs"):
                yield os.path.join(d, f)


def module_of(src, path):
    rel = os.path.relpath(path, src)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib", "main"):
        rel = rel[:-1]
    return tuple(rel)


def resolve(full, modules, reexports, seen=0):
    """The file a path names: its longest module prefix, following `pub use`."""
    k = len(full)
    while k and full[:k] not in modules: k -= 1
    mod, rest = full[:k], full[k:]
    if rest and (mod, rest[0]) in reexports and seen < 8:
        return resolve(reexports[(mod, rest[0])] + rest[1:], modules, reexports, seen + 1)
    return mod


def reexports_of(clean, modpath, modules):
    """(module, name) -> the absolute path a `pub use` in this module names."""
    out = {}
    for m in re.finditer(r"\bpub(?:\([^)]*\))?\s+use\s+([^;]+);", clean):
        for path in expand([], re.sub(r"\s+", " ", m.group(1)).strip()):
            path = [x.strip() for x in path if x.strip()]
            if not path or path[-1] in ("*", "self"): continue
            if path[0] == "crate": full = tuple(path[1:])
            elif path[0] == "super":
                base = modpath
                while path and path[0] == "super": base = base[:-1]; path = path[1:]
                full = base + tuple(path)
            elif path[0] == "self": full = modpath + tuple(path[1:])
            elif (modpath + (path[0],)) in modules: full = modpath + tuple(path)
            else: continue
            out[(modpath, full[-1])] = full
    return out


def expand(prefix, body):
    """`a::{b, c::{d}}` as the paths [a, b] and [a, c, d]."""
    parts, depth, cur = [], 0, ""
    for ch in body:
        if ch == "{": depth += 1
        if ch == "}": depth -= 1
        if ch == "," and depth == 0: parts.append(cur); cur = ""
        else: cur += ch
    parts.append(cur)
    res = []
    for p in parts:
        p = p.strip()
        if not p: continue
        m = re.match(r"^([\w:]*?)::\{(.*)\}$", p, re.S)
        if m: res += expand(prefix + m.group(1).split("::"), m.group(2))
        elif p.startswith("{"): res += expand(prefix, p[1:-1])
        else: res.append(prefix + re.split(r"\s+as\s+", p)[0].split("::"))
    return res


def imports(clean, modpath, modules, reexports):
    """Files (module paths) this file names."""
    out = set()
    paths = []
    for m in re.finditer(r"\buse\s+([^;]+);", clean):
        paths += expand([], re.sub(r"\s+", " ", m.group(1)).strip())
    for m in re.finditer(r"(?<![\w:])((?:crate|super|self|\w+)(?:::\w+)+)", clean):
        first = m.group(1).split("::")[0]
        # a path from the crate, the parent, or into a child module
        if first in ("crate", "super", "self") or (modpath + (first,)) in modules:
            paths.append(m.group(1).split("::"))
    for p in paths:
        p = [x.strip() for x in p if x.strip()]
        if not p: continue
        if p[0] == "crate": base = ()
        elif p[0] == "super":
            base = modpath
            while p and p[0] == "super":
                base = base[:-1]; p = p[1:]
            p = ["_"] + p
        elif p[0] == "self": base = modpath
        elif (modpath + (p[0],)) in modules: base = modpath; p = ["_"] + p
        else: continue
        full = resolve(base + tuple(p[1:]), modules, reexports)
        if full in modules and full != modpath and full != ():
            # naming a child module only to reach its own items counts; naming
            # the parent from a child counts too
            out.add(full)
        elif full == () and () in modules and modpath != ():
            out.add(())
    return out


def scc(graph):
    index, low, stack, on, res, c = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)
    def visit(v):
        index[v] = low[v] = c[0]; c[0] += 1; stack.append(v); on.add(v)
        for w in graph.get(v, ()):
            if w not in index: visit(w); low[v] = min(low[v], low[w])
            elif w in on: low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v: break
            res.append(comp)
    for v in list(graph): 
        if v not in index: visit(v)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=900)
    ap.add_argument("--fns", type=int, default=120)
    ap.add_argument("--list", action="store_true", help="list every circle's files")
    ap.add_argument("--edges", metavar="FILE", help="print the files FILE names (a path under crates/)")
    ap.add_argument("--near", type=int, default=10, help="how close to a limit is near it")
    ap.add_argument("--impl-files", type=int, default=2, help="files a type's inherent impls may spread over")
    ap.add_argument("--methods", type=int, default=10, help="how many of the types with most methods to list")
    ap.add_argument("--check", action="store_true", help="exit 1 when a file or a function is over its limit")
    a = ap.parse_args()
    crates = sorted(os.path.join(ROOT, "crates", c) for c in os.listdir(os.path.join(ROOT, "crates")))
    big_files, long_fns, near_fns, circles, total = [], [], [], [], 0
    spread, methods = [], []
    for crate in crates:
        src = os.path.join(crate, "src")
        modules, texts = {}, {}
        for path in crate_files(crate):
            if is_test_file(path): continue
            text = open(path, encoding="utf-8").read()
            mp = module_of(src, path)
            modules[mp] = (path, os.path.basename(path) in ("mod.rs", "lib.rs", "main.rs"))
            texts[mp] = text
        graph, reexports, cleaned, types = {}, {}, {}, {}
        defined, blocks = {}, []
        for mp, (path, _) in modules.items():
            cleaned[mp] = strip(production_text(texts[mp])[0])
            reexports.update(reexports_of(cleaned[mp], mp, modules))
        for mp, (path, _) in modules.items():
            limit = production_text(texts[mp])[1]
            rel = os.path.relpath(path, ROOT)
            total += limit
            if limit > a.files: big_files.append((limit, rel))
            prod = cleaned[mp]
            for name, line, n in functions(prod):
                if n > a.fns: long_fns.append((n, f"{rel}:{line} {name}"))
                elif n > a.fns - a.near: near_fns.append((n, f"{rel}:{line} {name}"))
            for name in DEF.findall(prod):
                defined.setdefault(name, set()).add(rel)
            for name, is_trait, count in impls(prod):
                if not is_trait:
                    blocks.append((name, rel, count))
            graph[mp] = imports(prod, mp, modules, reexports)
            if a.edges and os.path.relpath(path, ROOT) == a.edges:
                for target in sorted(graph[mp]):
                    print(f"{a.edges} -> {os.path.relpath(modules[target][0], ROOT)}")
        # A name defined in several files (each provider's `Decoder`) is
        # one type per file: an impl belongs to the one in its own file.
        for name, rel, count in blocks:
            homes = defined.get(name, set())
            home = rel if rel in homes or len(homes) != 1 else next(iter(homes))
            key = name if len(homes) <= 1 else f"{name} ({os.path.relpath(home, os.path.join('crates', os.path.basename(crate), 'src'))})"
            types.setdefault(key, [set(), 0])
            types[key][0].add(rel)
            types[key][1] += count
        crate_name = os.path.basename(crate)
        for name, (files, count) in types.items():
            if len(files) > a.impl_files:
                spread.append((len(files), f"{crate_name}::{name}", sorted(files)))
            methods.append((count, f"{crate_name}::{name}", len(files)))
        for comp in scc(graph):
            if len(comp) > 1:
                circles.append(sorted(os.path.relpath(modules[m][0], ROOT) for m in comp))
    print(f"production lines: {total}")
    print(f"files over {a.files} lines: {len(big_files)}")
    for n, f in sorted(big_files, reverse=True): print(f"  {n:5} {f}")
    print(f"functions over {a.fns} lines: {len(long_fns)}")
    for n, f in sorted(long_fns, reverse=True): print(f"  {n:5} {f}")
    print(f"functions within {a.near} lines of the limit: {len(near_fns)}")
    for n, f in sorted(near_fns, reverse=True): print(f"  {n:5} {f}")
    print(f"types whose impl blocks are spread over more than {a.impl_files} files: {len(spread)}")
    for n, name, files in sorted(spread, reverse=True):
        print(f"  {n:3} files: {name} ({', '.join(files) if a.list else ', '.join(files[:3]) + (', ...' if n > 3 else '')})")
    print(f"methods per type (inherent impls), the {a.methods} with most:")
    for n, name, nfiles in sorted(methods, reverse=True)[: a.methods]:
        print(f"  {n:4} {name} ({nfiles} file{'s' if nfiles != 1 else ''})")
    print(f"import circles: {len(circles)}")
    for c in circles:
        print(f"  {len(c)} files: " + (", ".join(c) if a.list or len(c) <= 4 else ", ".join(c[:4]) + ", ..."))
    if a.check and (big_files or long_fns):
        print(f"shape: over the limits (files over {a.files} lines, functions over {a.fns})", file=sys.stderr)
        sys.exit(1)


main()
