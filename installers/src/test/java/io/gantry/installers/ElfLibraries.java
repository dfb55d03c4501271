package io.gantry.installers;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The libraries an ELF shared object links ({@code DT_NEEDED} of its dynamic section, what {@code readelf -d}
 * prints as NEEDED), read here so that the package checks need no binutils. 64-bit little-endian only (x86-64).
 */
final class ElfLibraries {

    private static final int SHT_DYNAMIC = 6;
    private static final long DT_NULL = 0;
    private static final long DT_NEEDED = 1;

    private ElfLibraries() {
    }

    static List<String> needed(byte[] file, String name) throws IOException {
        ByteBuffer elf = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN);
        if (file.length < 64 || elf.getInt(0) != 0x464c457f || file[4] != 2 || file[5] != 1) {
            throw new IOException(name + " is not a 64-bit little-endian ELF file");
        }
        long sectionHeaders = elf.getLong(0x28);
        int entrySize = Short.toUnsignedInt(elf.getShort(0x3a));
        int sections = Short.toUnsignedInt(elf.getShort(0x3c));
        List<String> needed = new ArrayList<>();
        for (int i = 0; i < sections; i++) {
            int header = (int) (sectionHeaders + (long) i * entrySize);
            if (elf.getInt(header + 4) != SHT_DYNAMIC) {
                continue;
            }
            int offset = (int) elf.getLong(header + 0x18);
            int size = (int) elf.getLong(header + 0x20);
            int strings = (int) elf.getLong((int) (sectionHeaders + (long) elf.getInt(header + 0x28) * entrySize)
                    + 0x18);
            for (int entry = offset; entry + 16 <= offset + size; entry += 16) {
                long tag = elf.getLong(entry);
                if (tag == DT_NULL) {
                    break;
                }
                if (tag == DT_NEEDED) {
                    int start = strings + (int) elf.getLong(entry + 8);
                    int end = start;
                    while (file[end] != 0) {
                        end++;
                    }
                    needed.add(new String(file, start, end - start, StandardCharsets.US_ASCII));
                }
            }
        }
        return needed;
    }
}
