package io.gantry.proxy.session;

import io.gantry.wire.ErrPacket;

/**
 * What a command handler answers a client command with. A handler answers at once ({@link Ok}, {@link Error},
 * {@link Done}, {@link Close}), or says the answer comes later ({@link Later}: it forwards the command to a server,
 * or waits on another thread) and hands its answer to {@link SessionContext#finish} when it has one. Only
 * {@code SessionContext.finish} writes these to the client, so every command ends in the same way.
 */
public sealed interface Reply {

    /** An OK with the session's status flags. */
    Reply OK = new Ok();
    /**
     * Nothing (more) to write, and the command is done: COM_STMT_CLOSE and COM_STMT_SEND_LONG_DATA never get an
     * answer, and a handler that wrote a result set itself has written it.
     */
    Reply DONE = new Done();
    /** The handler answers, or has answered, by itself. */
    Reply LATER = new Later();

    static Reply error(ErrPacket error) {
        return new Error(error);
    }

    /** The error, then the session closes (the client and Gantry can no longer agree on the session). */
    static Reply close(ErrPacket error) {
        return new Close(error);
    }

    record Ok() implements Reply {
    }

    record Error(ErrPacket error) implements Reply {
    }

    record Done() implements Reply {
    }

    record Later() implements Reply {
    }

    record Close(ErrPacket error) implements Reply {
    }
}
