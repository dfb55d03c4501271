package io.gantry.proxy.session;

import io.gantry.wire.Packet;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.ssl.SslHandler;

/**
 * The one way out to the client: every answer, a server's forwarded or one Gantry makes itself, is written here, and
 * the session's parts pause the client's reads here for back-pressure. The session's parts are given this instead of
 * the channel, so none of them can reach the pipeline, or write around the session's order of answers.
 */
public final class ClientWriter {

    private final ChannelHandlerContext ctx;
    /** Held for a take-over ({@link #holdForMove}): nothing is read, whatever back-pressure asks. */
    private boolean heldForMove;

    public ClientWriter(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    /** Writes one packet; it leaves at the next {@link #flush}. */
    public void write(Packet packet) {
        ctx.write(packet);
    }

    /**
     * Writes packets already framed (a burst of a server's answer, a cached answer); they leave at the next
     * {@link #flush}. No promise per write: a failed write reaches {@code ClientSession.exceptionCaught}, which closes
     * the session.
     */
    public void writeFramed(ByteBuf framed) {
        ctx.write(framed, ctx.voidPromise());
    }

    public void flush() {
        ctx.flush();
    }

    /** Whether the client takes more now; when not, the server's answer waits (see {@code ResponseForwarder}). */
    public boolean isWritable() {
        return ctx.channel().isWritable();
    }

    /** Whether the client's packets are read now. */
    public boolean readsClient() {
        return ctx.channel().config().isAutoRead();
    }

    /** Stops or resumes reading the client's packets: back-pressure on a client that sends faster than it is served. */
    public void readClient(boolean read) {
        ctx.channel().config().setAutoRead(read && !heldForMove);
    }

    /**
     * A take-over: the client's next command is left unread until {@link #releaseFromMove}, so that once the
     * statement running now is answered the session is between two statements and can move, however busy its
     * client keeps it.
     */
    public void holdForMove() {
        heldForMove = true;
        ctx.channel().config().setAutoRead(false);
    }

    /** Reading goes on after {@link #holdForMove}; nothing when the session was not held. */
    public void releaseFromMove() {
        if (heldForMove) {
            heldForMove = false;
            ctx.channel().config().setAutoRead(true);
        }
    }

    /** Closes the connection once what was written has left (an error that ends the session). */
    public void closeAfterFlush() {
        ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
    }

    /** Closes the connection now. */
    public void close() {
        ctx.close();
    }

    public boolean isOpen() {
        return ctx.channel().isActive();
    }

    /** The client connection's TLS, or null: what it negotiated is the answer to the {@code Ssl_*} status rows. */
    public SslHandler tls() {
        return ctx.pipeline().get(SslHandler.class);
    }
}
