package io.gantry.wire;

/** Argument checks shared by the packet records' constructors. */
final class Checks {

    private Checks() {
    }

    /**
     * @throws IllegalArgumentException naming {@code name} if {@code value} is not 0 to {@code max}
     */
    static void range(String name, long value, long max) {
        if (value < 0 || value > max) {
            throw new IllegalArgumentException(name + " must be 0 to " + max + ", was " + value);
        }
    }
}
