package io.gantry.admin;

import java.util.Objects;

/** An admin operation refused or failed, with the kind of failure ({@link AdminOperations} throws it). */
public final class AdminException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final AdminResult.Failure failure;

    public AdminException(AdminResult.Failure failure, String message) {
        super(message);
        this.failure = Objects.requireNonNull(failure, "failure");
    }

    public AdminResult.Failure failure() {
        return failure;
    }

    /** As a result. */
    public AdminResult.Failed result() {
        return new AdminResult.Failed(failure, getMessage());
    }
}
