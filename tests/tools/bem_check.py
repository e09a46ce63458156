#!/usr/bin/env python3
"""Independent checker for BEM packages written by charkit.

Written from the BEM 1.0–1.5 specification (§2 binary container, §7 meshes,
§8 textures, §10 deformation frames, §13 sounds, §14 ZIP container), not from
charkit's C++ code, so the writer is checked by a second reading of the spec.

Usage: bem_check.py [--lenient] FILE...
Exit status: 0 every file passes, 1 a check failed, 2 usage error.

Checks:
  binary  header fields, directory entries, contiguous payloads without gaps
          or trailing bytes, zstd frames parsed by hand (one frame, no
          dictionary, content size == decoded_size), decoded with the
          `zstandard` module when it is installed
  zip     manifest.json at the root, STORED/DEFLATE only, no encryption,
          payload names payloads/NNNN.bin or N.bin, CRCs (zipfile checks them)
  both    strict manifest JSON (no duplicate keys); every payload id the
          manifest references exists with a plausible size; writer duties of
          §2 (no two payloads with the same bytes, zstd only when smaller, no
          unreferenced payloads; warnings with --lenient); binary packages
          carry no format_version; the header minor is at least what the
          features used need (§1)
"""
import io
import json
import struct
import sys
import zipfile

try:
    import zstandard  # Debian: python3-zstandard
except ImportError:  # frames are still parsed by hand
    zstandard = None

MAGIC = b"BEM\x00PKG\x00"
MIB = 1 << 20
MAX_FILE = 2 << 30
MAX_MANIFEST = 4 * MIB
MAX_PAYLOAD = 512 * MIB


class Checker:
    def __init__(self, name, lenient):
        self.name = name
        self.lenient = lenient
        self.errors = []
        self.warnings = []

    def error(self, msg):
        self.errors.append(msg)

    def duty(self, msg):
        (self.warnings if self.lenient else self.errors).append(msg)


# ---- zstd frame (RFC 8878 §3.1.1) ------------------------------------------

def check_zstd_frame(c, pid, data, decoded_size):
    if len(data) < 6 or struct.unpack_from("<I", data, 0)[0] != 0xFD2FB528:
        c.error(f"payload {pid}: zstd payload does not start with a zstd frame")
        return
    fhd = data[4]
    fcs_flag, single, reserved, checksum, dict_flag = fhd >> 6, (fhd >> 5) & 1, (fhd >> 3) & 1, (fhd >> 2) & 1, fhd & 3
    if reserved:
        c.error(f"payload {pid}: zstd frame header reserved bit set")
    pos = 5
    if not single:
        pos += 1  # window descriptor
    if dict_flag:
        c.error(f"payload {pid}: zstd frame names a dictionary (§2: no dictionary)")
        pos += (0, 1, 2, 4)[dict_flag]
    fcs_size = (1 if single else 0, 2, 4, 8)[fcs_flag]
    if fcs_size == 0:
        c.error(f"payload {pid}: zstd frame without content size (§2 needs the exact size)")
        return
    if pos + fcs_size > len(data):
        c.error(f"payload {pid}: zstd frame header truncated")
        return
    fcs = int.from_bytes(data[pos:pos + fcs_size], "little") + (256 if fcs_size == 2 else 0)
    pos += fcs_size
    if fcs != decoded_size:
        c.error(f"payload {pid}: zstd content size {fcs} != decoded_size {decoded_size}")
    # Walk the blocks to the end of the frame: it must end exactly at the end
    # of the stored range (one frame, nothing after it).
    while True:
        if pos + 3 > len(data):
            c.error(f"payload {pid}: zstd frame truncated")
            return
        bh = int.from_bytes(data[pos:pos + 3], "little")
        pos += 3
        last, btype, bsize = bh & 1, (bh >> 1) & 3, bh >> 3
        if btype == 3:
            c.error(f"payload {pid}: reserved zstd block type")
            return
        pos += 1 if btype == 1 else bsize
        if last:
            break
    pos += 4 if checksum else 0
    if pos != len(data):
        c.error(f"payload {pid}: zstd frame ends at {pos} of {len(data)} stored bytes "
                "(§2: exactly one frame)")
        return
    if zstandard is not None:
        try:
            out = zstandard.ZstdDecompressor().decompress(data, max_output_size=decoded_size)
        except zstandard.ZstdError as e:
            c.error(f"payload {pid}: zstd data does not decode: {e}")
            return
        if len(out) != decoded_size:
            c.error(f"payload {pid}: decodes to {len(out)} bytes, directory says {decoded_size}")
        return out
    return None


# ---- containers ------------------------------------------------------------

def read_binary(c, data):
    if len(data) < 40:
        c.error("file shorter than the 40-byte header")
        return None, None, None
    magic, major, minor, header_size, file_size, manifest_size, count, flags = \
        struct.unpack_from("<8sHHIQQII", data, 0)
    if magic != MAGIC:
        c.error("bad magic")
    if major != 1:
        c.error(f"major {major} != 1")
    if not 0 <= minor <= 5:
        c.error(f"minor {minor} not in 0..5")
    if header_size != 40:
        c.error(f"header_size {header_size} != 40")
    if file_size != len(data):
        c.error(f"file_size {file_size} != real length {len(data)}")
    if len(data) > MAX_FILE:
        c.error("file larger than 2 GiB")
    if not 1 <= manifest_size <= MAX_MANIFEST:
        c.error(f"manifest_size {manifest_size} not in 1..4 MiB")
    if flags != 0:
        c.error(f"flags {flags} != 0")
    if count > (4096 if minor < 2 else 16384):
        c.error(f"{count} directory entries; §11 allows {4096 if minor < 2 else 16384} in 1.{minor}")
    dir_at = 40 + manifest_size
    end_of_dir = dir_at + 32 * count
    if end_of_dir > len(data):
        c.error("manifest and directory run past the end of the file")
        return None, None, None
    manifest = data[40:dir_at]
    expected = end_of_dir
    payloads = []
    for i in range(count):
        codec, reserved, offset, stored, decoded = struct.unpack_from("<IIQQQ", data, dir_at + 32 * i)
        if codec not in (0, 1):
            c.error(f"payload {i}: codec {codec}")
        if reserved:
            c.error(f"payload {i}: reserved {reserved} != 0")
        if not 1 <= decoded <= MAX_PAYLOAD or not 1 <= stored <= MAX_PAYLOAD:
            c.error(f"payload {i}: sizes stored {stored} / decoded {decoded} not in 1 B..512 MiB")
        if offset != expected:
            c.error(f"payload {i}: offset {offset}, expected {expected} (contiguous, in order)")
        if offset + stored > len(data):
            c.error(f"payload {i}: runs past the end of the file")
            payloads.append(None)
            expected = offset + stored
            continue
        blob = data[offset:offset + stored]
        expected = offset + stored
        if codec == 0:
            if stored != decoded:
                c.error(f"payload {i}: raw with stored {stored} != decoded {decoded}")
            payloads.append((bytes(blob), decoded))
        else:
            if stored >= decoded:
                c.duty(f"payload {i}: zstd frame of {stored} bytes is not smaller than its "
                       f"{decoded} decoded bytes (§2: write raw when compression does not help)")
            out = check_zstd_frame(c, i, bytes(blob), decoded)
            payloads.append((out, decoded))
    if expected != len(data):
        c.error(f"{len(data) - expected} bytes after the last payload (or missing)")
    return manifest, payloads, minor


def payload_number(name):
    if not name.endswith(".bin"):
        return None
    digits = name[:-4]
    if not digits.isdigit() or not 1 <= len(digits) <= 5 or not digits.isascii():
        return None
    if len(digits) != 4 and len(digits) > 1 and digits[0] == "0":
        return None
    return int(digits)


def read_zip(c, data):
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as e:
        c.error(f"not a readable ZIP: {e}")
        return None, None
    manifest = None
    found = {}
    for info in zf.infolist():
        if info.flag_bits & 1:
            c.error(f"{info.filename}: encrypted entry")
            continue
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            c.error(f"{info.filename}: method {info.compress_type} (STORED or DEFLATE only)")
            continue
        try:
            content = zf.read(info)  # checks the CRC-32
        except Exception as e:  # noqa: BLE001 - any read problem is a finding
            c.error(f"{info.filename}: {e}")
            continue
        if info.compress_type == zipfile.ZIP_DEFLATED and info.compress_size >= info.file_size:
            c.duty(f"{info.filename}: DEFLATE is not smaller than the data")
        if info.filename == "manifest.json":
            manifest = content
            continue
        base = info.filename[len("payloads/"):] if info.filename.startswith("payloads/") else info.filename
        n = payload_number(base) if "/" not in base else None
        if n is None:
            continue
        if n in found:
            c.error(f"{info.filename}: a second file for payload {n}")
        found[n] = content
    if manifest is None:
        c.error("no manifest.json at the root of the ZIP")
        return None, None
    count = max(found) + 1 if found else 0
    payloads = [(found[i], len(found[i])) if i in found else None for i in range(count)]
    return manifest, payloads


# ---- manifest --------------------------------------------------------------

def no_duplicates(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise ValueError(f"duplicate key {k!r}")
        d[k] = v
    return d


def uint(v):
    return v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2 ** 32 else None


BLOCK = {10: (4, 4, 8), 12: (4, 4, 16), 25: (4, 4, 16), 26: (4, 4, 8), 27: (4, 4, 16),
         48: (4, 4, 16), 49: (5, 5, 16), 50: (6, 6, 16), 4: (1, 1, 4), 63: (1, 1, 1)}


def texture_bytes(fmt, w, h, mips):
    """§8: the full declared mip chain, whole blocks per level, no padding."""
    bw, bh, bb = BLOCK[fmt]
    total = 0
    for i in range(mips):
        lw, lh = max(1, w >> i), max(1, h >> i)
        total += ((lw + bw - 1) // bw) * ((lh + bh - 1) // bh) * bb
    return total


def expected_sizes(m):
    """(pointer, id, check) for every payload reference: check(bytes) -> problem or None."""
    refs = []

    def exact(n):
        return lambda b: None if len(b) == n else f"{len(b)} bytes, expected {n}"

    def within(lo, hi):
        return lambda b: None if lo <= len(b) <= hi else f"{len(b)} bytes, expected {lo}..{hi}"

    for mi, mesh in enumerate(m.get("meshes") or []):
        if not isinstance(mesh, dict):
            continue
        vc, isz = uint(mesh.get("vertex_count")), uint(mesh.get("index_size"))
        for si, s in enumerate(mesh.get("streams") or []):
            if isinstance(s, dict) and uint(s.get("payload")) is not None:
                stride = uint(s.get("stride"))
                chk = exact(vc * stride) if vc and stride else within(1, MAX_PAYLOAD)
                refs.append((f"/meshes/{mi}/streams/{si}/payload", s["payload"], chk))
        if uint(mesh.get("indices")) is not None:  # 1.0
            n = uint(mesh.get("index_count"))
            refs.append((f"/meshes/{mi}/indices", mesh["indices"],
                         exact(n * isz) if n and isz else within(1, MAX_PAYLOAD)))
        for di, d in enumerate(mesh.get("draws") or []):
            if isinstance(d, dict) and uint(d.get("indices")) is not None:  # 1.1+
                n = uint(d.get("count"))
                refs.append((f"/meshes/{mi}/draws/{di}/indices", d["indices"],
                             exact(n * isz) if n and isz else within(1, MAX_PAYLOAD)))
    for ti, t in enumerate(m.get("textures") or []):
        if isinstance(t, dict) and uint(t.get("payload")) is not None:
            f, w, h, mips = (uint(t.get(k)) for k in ("format", "width", "height", "mips"))
            ok = f in BLOCK and w and h and mips
            refs.append((f"/textures/{ti}/payload", t["payload"],
                         exact(texture_bytes(f, w, h, mips)) if ok else within(1, MAX_PAYLOAD)))
    for ai, a in enumerate(m.get("appearances") or []):
        if isinstance(a, dict) and uint(a.get("preview")) is not None:
            refs.append((f"/appearances/{ai}/preview", a["preview"],
                         lambda b: None if b.startswith(b"\x89PNG\r\n\x1a\n") and len(b) <= 8 * MIB
                         else "not a PNG of at most 8 MiB"))
    for ci, ch in enumerate(m.get("mesh_deformations") or []):
        for fi, fr in enumerate((ch.get("frames") or []) if isinstance(ch, dict) else []):
            if isinstance(fr, dict) and uint(fr.get("payload")) is not None:
                n = uint(fr.get("count")) or 0

                def frame_check(b, n=n):
                    # §10: UInt32 J, J bytes of JSON, then N × 16-byte records.
                    if len(b) < 4:
                        return "shorter than the descriptor length"
                    j = struct.unpack_from("<I", b, 0)[0]
                    want = 4 + j + 16 * n
                    return None if len(b) == want else f"{len(b)} bytes, expected 4 + {j} + 16 × {n}"
                refs.append((f"/mesh_deformations/{ci}/frames/{fi}/payload", fr["payload"], frame_check))
    for di, d in enumerate(m.get("drivers") or []):
        s = d.get("sound") if isinstance(d, dict) else None
        if isinstance(s, dict) and uint(s.get("payload")) is not None:
            refs.append((f"/drivers/{di}/sound/payload", s["payload"], within(16, 32 * MIB)))
    return refs


def min_minor(m):
    """A lower bound of the version the features need (§1 table)."""
    need = 0
    if "option_groups" in m or "component_rules" in m:
        need = 1
    if "texture_slots" in m or "bone_name_aliases" in m:
        need = max(need, 2)
    if "parameters" in m or "mesh_deformations" in m:
        need = max(need, 3)
    if isinstance(m.get("target"), dict) and "resources" in m["target"]:
        need = max(need, 4)
    if "root_offset" in m or "drivers" in m:
        need = max(need, 5)
    return need


def check_file(path, lenient):
    c = Checker(path, lenient)
    with open(path, "rb") as f:
        data = f.read()
    minor = None
    if data[:8] == MAGIC:
        manifest_bytes, payloads, minor = read_binary(c, data)
        kind = "binary"
    elif data[:4] == b"PK\x03\x04":
        manifest_bytes, payloads = read_zip(c, data)
        kind = "zip"
    else:
        c.error("neither a BEM binary nor a ZIP")
        return c
    if manifest_bytes is None:
        return c
    try:
        m = json.loads(bytes(manifest_bytes).decode("utf-8"), object_pairs_hook=no_duplicates)
    except (UnicodeDecodeError, ValueError) as e:
        c.error(f"manifest is not strict UTF-8 JSON: {e}")
        return c
    if not isinstance(m, dict):
        c.error("manifest is not an object")
        return c
    if kind == "binary":
        if "format_version" in m:
            c.duty("binary manifest carries format_version (§14: dropped when writing binary)")
        if minor is not None and minor < min_minor(m):
            c.error(f"header minor {minor} but the manifest uses 1.{min_minor(m)} features")
        if minor is not None and minor != 0 and "appearances" in m and "option_groups" not in m:
            c.error(f"1.0 appearances under a 1.{minor} header")
    elif "format_version" in m:
        fv = m["format_version"]
        if fv not in [f"1.{i}" for i in range(6)]:
            c.error(f"format_version {fv!r} is not 1.0 .. 1.5")
        elif int(fv[2]) < min_minor(m):
            c.error(f"format_version {fv} but the manifest uses 1.{min_minor(m)} features")

    referenced = set()
    for ptr, pid, chk in expected_sizes(m):
        referenced.add(pid)
        if pid >= len(payloads) or payloads[pid] is None:
            c.error(f"{ptr}: payload {pid} does not exist")
            continue
        content, decoded = payloads[pid]
        if content is None:  # zstd payload and no zstandard module: not decoded
            continue
        problem = chk(content)
        if problem:
            c.error(f"{ptr}: payload {pid}: {problem}")
    seen = {}
    for pid, p in enumerate(payloads):
        if p is None:
            continue
        if pid not in referenced:
            c.duty(f"payload {pid} is not referenced by the manifest")
        if p[0] is not None:
            key = bytes(p[0])
            if key in seen:
                c.duty(f"payloads {seen[key]} and {pid} hold the same bytes (§2: share one id)")
            else:
                seen[key] = pid
    return c


def main(argv):
    args = [a for a in argv[1:] if a != "--lenient"]
    lenient = "--lenient" in argv[1:]
    if not args or any(a.startswith("-") for a in args):
        print(__doc__, file=sys.stderr)
        return 2
    bad = 0
    for path in args:
        try:
            c = check_file(path, lenient)
        except OSError as e:
            print(f"{path}: cannot read: {e}", file=sys.stderr)
            return 2
        for w in c.warnings:
            print(f"{path}: warning: {w}")
        for e in c.errors:
            print(f"{path}: error: {e}")
        print(f"{path}: {'ok' if not c.errors else 'FAILED'}"
              f"{'' if zstandard else ' (zstd frames parsed, not decoded: no zstandard module)'}")
        bad += bool(c.errors)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
