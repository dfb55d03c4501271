package io.gantry.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class UpstreamUrlTest {

    @Test
    void parsesEveryPart() {
        UpstreamUrl url = UpstreamUrl.parse("mysql://app:s3cret@db1.example:33061/shop|60");
        assertThat(url).isEqualTo(new UpstreamUrl("db1.example", 33061, "shop", "app", "s3cret", 60));
        assertThat(url.address()).isEqualTo("db1.example:33061");
    }

    @Test
    void listsAddressesAndWeights() {
        assertThat(UpstreamUrl.addressesAndWeights(UpstreamUrl.parseList(List.of(
                "mysql://app@db1:3307/shop|60,mysql://app@db2/shop")))).isEqualTo("db1:3307|60, db2:3306|50");
        assertThat(UpstreamUrl.addressesAndWeights(List.of())).isEmpty();
    }

    @Test
    void defaultsPortAndWeight() {
        UpstreamUrl url = UpstreamUrl.parse("mysql://app@10.0.0.1/shop");
        assertThat(url.port()).isEqualTo(3306);
        assertThat(url.weight()).isEqualTo(UpstreamUrl.DEFAULT_WEIGHT);
        assertThat(url.password()).isEmpty();
    }

    @Test
    void acceptsIpv6AndPercentEncodedPasswords() {
        UpstreamUrl url = UpstreamUrl.parse("mariadb://app:p%40ss%3Aw+rd@[::1]:3307/app");
        assertThat(url.host()).isEqualTo("::1");
        assertThat(url.port()).isEqualTo(3307);
        assertThat(url.password()).isEqualTo("p@ss:w+rd");
    }

    @Test
    void listTakesCommasAndRepeatedFlags() {
        List<UpstreamUrl> urls = UpstreamUrl.parseList(List.of(
                "mysql://a:a@h1:1/d|60, mysql://a:a@h2:2/d", "mysql://a:a@h3:3/d|1"));
        assertThat(urls).extracting(UpstreamUrl::address).containsExactly("h1:1", "h2:2", "h3:3");
        assertThat(urls).extracting(UpstreamUrl::weight).containsExactly(60, 50, 1);
    }

    @ParameterizedTest
    @CsvSource(delimiter = ';', value = {
            "mysql://a:pw@h:1/d|0;          the weight 0 is outside 1..100",
            "mysql://a:pw@h:1/d|101;        the weight 101 is outside 1..100",
            "mysql://a:pw@h:1/d|heavy;      the weight 'heavy' is not a whole number",
            "postgres://a:pw@h:1/d;         unknown scheme 'postgres'",
            "mysql://a:pw@:1/d;             the host is missing",
            "mysql://a:pw@h:1;              no database",
            "mysql://a:pw@h:99999/d;        the port 99999 is outside 1..65535",
            "mysql://a:pw@h:x/d;            the port 'x' is not a number",
            "mysql://h:1/d;                 no user",
            "h:1/d;                         expected mysql://user:password@host:port/database",
    })
    void refusesBadEntriesQuotingThemWithoutThePassword(String entry, String problem) {
        assertThatThrownBy(() -> UpstreamUrl.parse(entry))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(problem)
                .hasMessageNotContaining("pw@")
                .hasMessageStartingWith("bad server URL '");
    }

    /** Found by UpstreamUrlFuzzTest: without a well-formed "://" the error message quoted the password. */
    @ParameterizedTest
    @CsvSource(delimiter = ';', value = {
            "mysql:/app:topsecret@127.0.0.1/app;   mysql:***@127.0.0.1/app",
            "app:topsecret@h:1/d;                  app:***@h:1/d",
            "mysql//app:topsecret@h/d|7;           mysql//app:***@h/d|7",
            "mysql://app:topsecret127.0.0.1/app;   mysql://app:***",
    })
    void masksThePasswordOfAnEntryWithoutAScheme(String entry, String shown) {
        assertThatThrownBy(() -> UpstreamUrl.parse(entry))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageNotContaining("topsecret")
                .hasMessageStartingWith("bad server URL '" + shown + "'");
    }

    /** Found by UpstreamUrlFuzzTest: a stray '%' escaped as URLDecoder's message, naming neither entry nor part. */
    @Test
    void badPercentEncodingNamesTheEntryAndThePart() {
        assertThatThrownBy(() -> UpstreamUrl.parse("mysql://app:pw@127.0.0.1/db%"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("bad server URL 'mysql://app:***@127.0.0.1/db%': bad percent-encoding in the "
                        + "database name");
        assertThatThrownBy(() -> UpstreamUrl.parse("mysql://app:p%zz@h/db"))
                .hasMessageStartingWith("bad server URL 'mysql://app:***@h/db': bad percent-encoding in the password");
    }

    @Test
    void refusesTheSameServerTwice() {
        assertThatThrownBy(() -> UpstreamUrl.parseList(List.of("mysql://a:x@h:1/d,mysql://b:y@h:1/d|7")))
                .hasMessageContaining("the server h:1 is listed twice")
                .hasMessageContaining("mysql://b:***@h:1/d|7");
    }

    @Test
    void neverPrintsThePassword() {
        assertThat(UpstreamUrl.parse("mysql://app:topsecret@h:1/d").toString())
                .doesNotContain("topsecret").isEqualTo("mysql://app:***@h:1/d|50");
    }

    @Test
    void withoutParametersTlsIsPreferredAndNoPublicKeyIsAskedFor() {
        UpstreamUrl url = UpstreamUrl.parse("mysql://app:pw@h:1/d");
        assertThat(url.tls()).isEqualTo(ServerTls.DEFAULT);
        assertThat(url.tls().mode()).isEqualTo(TlsMode.PREFERRED);
        assertThat(url.tls().getServerPublicKey()).isFalse();
        assertThat(url.tls().ca()).isEmpty();
    }

    @Test
    void readsTheTlsParametersBeforeTheWeight() {
        UpstreamUrl url = UpstreamUrl.parse(
                "mysql://app:pw@h:1/shop?ssl-mode=verify_identity&ssl-ca=/etc/gantry/ca%20file.pem|70");
        assertThat(url.database()).isEqualTo("shop");
        assertThat(url.weight()).isEqualTo(70);
        assertThat(url.tls()).isEqualTo(new ServerTls(TlsMode.VERIFY_IDENTITY, Path.of("/etc/gantry/ca file.pem"),
                false));
        assertThat(url.toString()).isEqualTo(
                "mysql://app:***@h:1/shop?ssl-mode=VERIFY_IDENTITY&ssl-ca=/etc/gantry/ca file.pem|70");
    }

    @ParameterizedTest
    @CsvSource(delimiter = ';', value = {
            "ssl-mode=DISABLED;                      DISABLED; false",
            "ssl_mode=required;                      REQUIRED; false",
            "ssl-mode=PREFERRED&get-server-public-key=true; PREFERRED; true",
            "get-server-public-key=off;              PREFERRED; false",
    })
    void acceptsEveryModeAndTheKeySwitch(String query, TlsMode mode, boolean getKey) {
        ServerTls tls = UpstreamUrl.parse("mysql://a:pw@h:1/d?" + query).tls();
        assertThat(tls.mode()).isEqualTo(mode);
        assertThat(tls.getServerPublicKey()).isEqualTo(getKey);
    }

    @ParameterizedTest
    @CsvSource(delimiter = ';', value = {
            "mysql://a:pw@h:1/d?sslMode=REQUIRED;             unknown parameter 'sslmode' (known: ssl-mode, ssl-ca, get-server-public-key)",
            "mysql://a:pw@h:1/d?allowPublicKeyRetrieval=true; unknown parameter 'allowpublickeyretrieval'",
            "mysql://a:pw@h:1/d?ssl-mode=ALWAYS;              ssl-mode 'ALWAYS' is not one of DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY",
            "mysql://a:pw@h:1/d?ssl-mode=;                    the parameter 'ssl-mode' has no value",
            "mysql://a:pw@h:1/d?ssl-mode=REQUIRED&ssl-mode=DISABLED; the parameter 'ssl-mode' is given twice",
            "mysql://a:pw@h:1/d?ssl-mode=VERIFY_CA;           ssl-mode=VERIFY_CA needs ssl-ca=",
            "mysql://a:pw@h:1/d?ssl-mode=VERIFY_IDENTITY|5;   ssl-mode=VERIFY_IDENTITY needs ssl-ca=",
            "mysql://a:pw@h:1/d?ssl-ca=/ca.pem;               ssl-ca is only used with ssl-mode=VERIFY_CA or VERIFY_IDENTITY",
            "mysql://a:pw@h:1/d?ssl-mode=REQUIRED&ssl-ca=/ca.pem; with ssl-mode=REQUIRED no certificate is checked",
            "mysql://a:pw@h:1/d?get-server-public-key=maybe;  get-server-public-key 'maybe' is not true or false",
            "mysql://a:pw@h:1/d?&ssl-mode=REQUIRED;           an empty query parameter",
            "mysql://a:pw@h:1/?ssl-mode=REQUIRED;             no database",
    })
    void refusesBadTlsParametersQuotingTheUrlWithoutThePassword(String entry, String problem) {
        assertThatThrownBy(() -> UpstreamUrl.parse(entry))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("bad server URL '" + entry.replace(":pw@", ":***@") + "': ")
                .hasMessageContaining(problem)
                .hasMessageNotContaining("pw@");
    }

    @Test
    void keepsTheTlsSettingsWhenTheWeightChanges() {
        UpstreamUrl url = UpstreamUrl.parse("mysql://a:pw@h:1/d?ssl-mode=REQUIRED");
        assertThat(url.withWeight(9).tls()).isEqualTo(ServerTls.of(TlsMode.REQUIRED));
    }
}
