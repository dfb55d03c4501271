package io.gantry.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gantry.sandbox.SandboxCertificates;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.nio.ByteBuffer;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The engines Gantry's data path uses to reach a server ({@link TlsTrust#backendHandler}), shaken hands in memory
 * with a server engine holding the sandbox's certificate (signed by the sandbox CA for {@code IP:127.0.0.1}): they
 * run on OpenSSL here, and every mode checks what the MySQL client's {@code --ssl-mode} of the same name checks.
 */
class TlsTrustHandshakeTest {

    private static SandboxCertificates certificates;
    private static SslContext server;

    @BeforeAll
    static void certificates() throws SSLException {
        certificates = SandboxCertificates.obtain();
        server = SslContextBuilder.forServer(certificates.serverCertificate().toFile(),
                certificates.serverKey().toFile()).build();
    }

    @Test
    void runsOnOpenSslWhereItsNativeLibraryLoads() {
        assertThat(OpenSsl.isAvailable()).as("netty-tcnative on Linux x86_64").isTrue();
        assertThat(TlsTrust.implementation()).startsWith("OpenSSL (");
        SSLEngine engine = engine(ServerTls.of(TlsMode.REQUIRED), "127.0.0.1");
        assertThat(engine.getClass().getSimpleName()).contains("OpenSsl");
        assertThat(engine.getUseClientMode()).isTrue();
    }

    @Test
    void requiredEncryptsWithoutCheckingTheCertificate() throws SSLException {
        SSLEngine client = engine(ServerTls.of(TlsMode.REQUIRED), "localhost");
        handshake(client);
        assertThat(client.getSession().getProtocol()).isEqualTo("TLSv1.3");
    }

    @Test
    void verifyIdentityAcceptsTheHostTheCertificateNames() throws SSLException {
        SSLEngine client = engine(new ServerTls(TlsMode.VERIFY_IDENTITY, certificates.ca(), false), "127.0.0.1");
        handshake(client);
        assertThat(client.getSession().getPeerCertificates()).isNotEmpty();
    }

    @Test
    void verifyIdentityRefusesAHostTheCertificateDoesNotName() {
        SSLEngine client = engine(new ServerTls(TlsMode.VERIFY_IDENTITY, certificates.ca(), false), "localhost");
        assertThatThrownBy(() -> handshake(client)).isInstanceOf(SSLException.class);
    }

    @Test
    void verifyCaRefusesACertificateOfAnotherCa() {
        SSLEngine client = engine(new ServerTls(TlsMode.VERIFY_CA, certificates.otherCa(), false), "127.0.0.1");
        assertThatThrownBy(() -> handshake(client)).isInstanceOf(SSLException.class);
    }

    @Test
    void verifyCaAcceptsAnyHostNameOfTheRightCa() throws SSLException {
        SSLEngine client = engine(new ServerTls(TlsMode.VERIFY_CA, certificates.ca(), false), "localhost");
        handshake(client);
    }

    /** The engine of the handler Gantry's data path would put on a connection to {@code host}. */
    private static SSLEngine engine(ServerTls tls, String host) {
        return TlsTrust.backendHandler(tls, host, 3306, ByteBufAllocator.DEFAULT).engine();
    }

    /** Runs the handshake between {@code client} and a new server engine in memory; throws what either refuses. */
    private static void handshake(SSLEngine client) throws SSLException {
        SSLEngine serverEngine = server.newEngine(ByteBufAllocator.DEFAULT);
        int size = Math.max(client.getSession().getPacketBufferSize(), serverEngine.getSession().getPacketBufferSize());
        ByteBuffer toServer = ByteBuffer.allocate(size * 4);
        ByteBuffer toClient = ByteBuffer.allocate(size * 4);
        ByteBuffer empty = ByteBuffer.allocate(0);
        ByteBuffer clientApp = ByteBuffer.allocate(size * 4);
        ByteBuffer serverApp = ByteBuffer.allocate(size * 4);
        client.beginHandshake();
        serverEngine.beginHandshake();
        for (int round = 0; round < 100; round++) {
            if (done(client) && done(serverEngine)) {
                return;
            }
            step(client, empty, toServer, toClient, clientApp);
            step(serverEngine, empty, toClient, toServer, serverApp);
        }
        throw new AssertionError("the handshake did not finish in 100 rounds");
    }

    private static boolean done(SSLEngine engine) {
        HandshakeStatus status = engine.getHandshakeStatus();
        return status == HandshakeStatus.FINISHED || status == HandshakeStatus.NOT_HANDSHAKING;
    }

    /** One turn of {@code engine}: run delegated tasks, write what it has to send, read what it was sent. */
    private static void step(SSLEngine engine, ByteBuffer empty, ByteBuffer out, ByteBuffer in, ByteBuffer app)
            throws SSLException {
        Runnable task;
        while ((task = engine.getDelegatedTask()) != null) {
            task.run();
        }
        engine.wrap(empty, out);
        in.flip();
        try {
            while (in.hasRemaining()) {
                int before = in.remaining();
                engine.unwrap(in, app);
                while ((task = engine.getDelegatedTask()) != null) {
                    task.run();
                }
                if (in.remaining() == before) {
                    break;
                }
            }
        } finally {
            in.compact();
        }
    }
}
