package io.gantry.handover;

import io.netty.channel.unix.FileDescriptor;
import java.util.function.BooleanSupplier;

/**
 * A client session the running Gantry holds still between two statements, to pass to the Gantry taking over: its
 * socket's descriptor and its state (JSON, one line). Exactly one of {@link #moved} and {@link #stays} is called.
 *
 * @param id         its session id, which is its {@code CONNECTION_ID()} in both processes
 * @param descriptor the client socket's descriptor, which this process keeps until {@link #moved}
 * @param state      what the other process needs to serve it, as one line of JSON
 * @param moved      the other process serves it: this one closes its copy of the socket, saying nothing
 * @param stays      it did not move: this one serves it on, from the bytes it held back
 * @param open       whether its socket is still open here: once closed (its client left), the descriptor's number
 *                   may name another file, and must not be passed
 */
public record MovingSession(long id, FileDescriptor descriptor, String state, Runnable moved, Runnable stays,
                            BooleanSupplier open) {
}
