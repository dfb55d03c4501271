package io.gantry.digest;

/**
 * What one digest row counts: a statement shape, run in a schema by an account. Its hash is the one a
 * {@link DigestTable} computes over a shape still in a builder, so a statement is looked up without making its
 * shape a string first.
 */
record DigestKey(String shape, String schema, String account) {

    @Override
    public int hashCode() {
        return hash(shape.hashCode(), schema, account);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof DigestKey key && shape.equals(key.shape) && schema.equals(key.schema)
                && account.equals(key.account);
    }

    /** @param shapeHash {@link String#hashCode} of the shape, or the same computed over its characters */
    static int hash(int shapeHash, String schema, String account) {
        return (shapeHash * 31 + schema.hashCode()) * 31 + account.hashCode();
    }
}
