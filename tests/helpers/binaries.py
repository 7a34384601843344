"""Reading shared libraries without tools: what an ELF or a PE32+ image needs and exports.

For the native FMUs' tests: their binaries must need only the C library (and Windows' own
DLLs) and export the FMI C API; objdump is not on every machine the tests run on.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable

from vcosim.fmi.native.vehicle import fmi_headers

MODEL_EXCHANGE_ONLY = {
    "fmi2EnterEventMode",
    "fmi2NewDiscreteStates",
    "fmi2EnterContinuousTimeMode",
    "fmi2CompletedIntegratorStep",
    "fmi2SetTime",
    "fmi2SetContinuousStates",
    "fmi2GetDerivatives",
    "fmi2GetEventIndicators",
    "fmi2GetContinuousStates",
    "fmi2GetNominalsOfContinuousStates",
}


def fmi_functions(version: int) -> set[str]:
    """The functions of the FMI C API a co-simulation FMU exports, from the standard's header
    (FMI 3: every one; FMI 2: all but model exchange's)."""
    header = (fmi_headers() / f"fmi{version}FunctionTypes.h").read_text()
    names = {f"fmi{version}{n}" for n in re.findall(rf"fmi{version}(\w+)TYPE", header)}
    return names - MODEL_EXCHANGE_ONLY


def elf_needed(binary: bytes) -> list[str]:
    """The DT_NEEDED libraries of a 64-bit little-endian ELF shared object."""
    (shoff,) = struct.unpack_from("<Q", binary, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", binary, 0x3A)
    sections = [
        struct.unpack_from("<IIQQQQIIQQ", binary, shoff + i * shentsize) for i in range(shnum)
    ]
    dynamic = next(s for s in sections if s[1] == 6)  # SHT_DYNAMIC
    strings = sections[dynamic[6]]  # its sh_link: the string table
    needed = []
    for offset in range(dynamic[4], dynamic[4] + dynamic[5], 16):
        tag, value = struct.unpack_from("<qQ", binary, offset)
        if tag == 1:  # DT_NEEDED
            start = strings[4] + value
            needed.append(binary[start : binary.index(b"\0", start)].decode())
    return needed


def elf_imports(binary: bytes) -> set[str]:
    """The undefined dynamic symbols of a 64-bit little-endian ELF: what it takes from others."""
    shoff = struct.unpack_from("<Q", binary, 0x28)[0]
    shentsize, shnum = struct.unpack_from("<HH", binary, 0x3A)
    sections = [
        struct.unpack_from("<IIQQQQIIQQ", binary, shoff + i * shentsize) for i in range(shnum)
    ]
    dynsym = next(s for s in sections if s[1] == 11)  # SHT_DYNSYM
    strings = sections[dynsym[6]][4]
    out = set()
    for offset in range(dynsym[4], dynsym[4] + dynsym[5], 24):
        name, _, _, section = struct.unpack_from("<IBBH", binary, offset)
        if name and section == 0:  # SHN_UNDEF
            start = strings + name
            out.add(binary[start : binary.index(b"\0", start)].decode())
    return out


def pe_header(binary: bytes) -> tuple[int, int]:
    """A PE image's machine and optional-header magic (0x8664, 0x20b: x86-64, PE32+)."""
    (pe,) = struct.unpack_from("<I", binary, 0x3C)
    assert binary[pe : pe + 4] == b"PE\0\0"
    (machine,) = struct.unpack_from("<H", binary, pe + 4)
    (magic,) = struct.unpack_from("<H", binary, pe + 24)
    return machine, magic


def _pe_directory(binary: bytes, index: int) -> tuple[int, Callable[[int], int]]:
    """The file offset of a PE32+ image's data directory ``index``, and RVA -> file offset."""
    pe = struct.unpack_from("<I", binary, 0x3C)[0]
    n_sections = struct.unpack_from("<H", binary, pe + 6)[0]
    optional_size = struct.unpack_from("<H", binary, pe + 20)[0]
    optional = pe + 24
    rva = struct.unpack_from("<I", binary, optional + 112 + 8 * index)[0]
    sections = [
        struct.unpack_from("<IIII", binary, optional + optional_size + 40 * i + 8)
        for i in range(n_sections)
    ]

    def at(rva: int) -> int:
        for size, address, raw_size, raw in sections:
            if address <= rva < address + max(size, raw_size):
                return rva - address + raw
        raise ValueError(f"RVA {rva:#x} in no section")

    return at(rva), at


def _c_string(binary: bytes, start: int) -> str:
    return binary[start : binary.index(b"\0", start)].decode()


def pe_exports(binary: bytes) -> set[str]:
    """The names a PE32+ image exports (its export directory's name table)."""
    directory, at = _pe_directory(binary, 0)
    count = struct.unpack_from("<I", binary, directory + 24)[0]
    names = at(struct.unpack_from("<I", binary, directory + 32)[0])
    return {
        _c_string(binary, at(struct.unpack_from("<I", binary, names + 4 * i)[0]))
        for i in range(count)
    }


def pe_imports(binary: bytes) -> set[str]:
    """The DLLs a PE32+ image imports from (its import directory)."""
    directory, at = _pe_directory(binary, 1)
    out = set()
    while True:
        name = struct.unpack_from("<I", binary, directory + 12)[0]
        if name == 0:
            return out
        out.add(_c_string(binary, at(name)))
        directory += 20
