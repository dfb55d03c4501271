package io.gantry.proxy.command;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Cipher suites in the notation the server's {@code Ssl_cipher} uses (OpenSSL's), from the JDK's (IANA's). */
class SslStatusRowsTest {

    @Test
    void tls13SuitesAreNamedAlike() {
        assertThat(SslStatusRows.openSslName("TLS_AES_256_GCM_SHA384")).isEqualTo("TLS_AES_256_GCM_SHA384");
        assertThat(SslStatusRows.openSslName("TLS_CHACHA20_POLY1305_SHA256"))
                .isEqualTo("TLS_CHACHA20_POLY1305_SHA256");
    }

    @Test
    void tls12SuitesTakeOpenSslNames() {
        assertThat(SslStatusRows.openSslName("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"))
                .isEqualTo("ECDHE-RSA-AES256-GCM-SHA384");
        assertThat(SslStatusRows.openSslName("TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"))
                .isEqualTo("ECDHE-ECDSA-CHACHA20-POLY1305");
        assertThat(SslStatusRows.openSslName("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256"))
                .isEqualTo("ECDHE-RSA-AES128-SHA256");
        assertThat(SslStatusRows.openSslName("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA")).isEqualTo("ECDHE-RSA-AES128-SHA");
        assertThat(SslStatusRows.openSslName("TLS_RSA_WITH_AES_256_GCM_SHA384")).isEqualTo("AES256-GCM-SHA384");
        assertThat(SslStatusRows.openSslName("TLS_RSA_WITH_AES_128_CBC_SHA")).isEqualTo("AES128-SHA");
        assertThat(SslStatusRows.openSslName("TLS_DHE_RSA_WITH_AES_256_GCM_SHA384"))
                .isEqualTo("DHE-RSA-AES256-GCM-SHA384");
    }

    @Test
    void namesItDoesNotKnowStayAsTheyAre() {
        assertThat(SslStatusRows.openSslName("TLS_EMPTY_RENEGOTIATION_INFO_SCSV"))
                .isEqualTo("TLS_EMPTY_RENEGOTIATION_INFO_SCSV");
    }
}
