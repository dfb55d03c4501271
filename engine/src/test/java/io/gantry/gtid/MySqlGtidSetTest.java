package io.gantry.gtid;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.UUID;
import org.junit.jupiter.api.Test;

class MySqlGtidSetTest {

    private static final String A = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
    private static final String B = "8f5c2a10-0000-4000-8000-00000000abcd";
    private static final UUID A_UUID = UUID.fromString(A);
    private static final UUID B_UUID = UUID.fromString(B);

    private static MySqlGtidSet set(String text) {
        return MySqlGtidSet.parse(text);
    }

    private static MySqlGtid gtid(UUID source, long n) {
        return new MySqlGtid(source, n);
    }

    @Test
    void roundTripsASetCapturedFromMySql() {
        MySqlGtidSet set = set("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:11-18");

        assertThat(set).hasToString("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:11-18");
        assertThat(set.flavour()).isEqualTo(Flavour.MYSQL);
        assertThat(set.isEmpty()).isFalse();
        assertThat(set.containsTransaction(gtid(A_UUID, 5))).isTrue();
        assertThat(set.containsTransaction(gtid(A_UUID, 6))).isFalse();
        assertThat(set.containsTransaction(gtid(A_UUID, 11))).isTrue();
        assertThat(set.containsTransaction(gtid(A_UUID, 19))).isFalse();
    }

    @Test
    void readsMySqlsMultiLineOutputInEitherCase() {
        MySqlGtidSet set = set("8F5C2A10-0000-4000-8000-00000000ABCD:1-3,\n3E11FA47-71CA-11E1-9E33-C80AA9429562:1-77\n");

        assertThat(set).hasToString(A + ":1-77," + B + ":1-3");
    }

    @Test
    void sortsUuidsByUnsignedBytesAsMySqlPrintsThem() {
        String text = "ffffffff-ffff-ffff-ffff-ffffffffffff:1,80000000-0000-0000-0000-000000000000:2,"
                + "00000000-0000-0000-0000-000000000000:3,7fffffff-ffff-ffff-ffff-ffffffffffff:4";

        assertThat(set(text)).hasToString("00000000-0000-0000-0000-000000000000:3,"
                + "7fffffff-ffff-ffff-ffff-ffffffffffff:4,80000000-0000-0000-0000-000000000000:2,"
                + "ffffffff-ffff-ffff-ffff-ffffffffffff:1");
    }

    @Test
    void mergesOverlappingTouchingAndRepeatedIntervals() {
        assertThat(set(A + ":7-9:1-5:6:11," + A + ":3-4:20-21:21")).hasToString(A + ":1-9:11:20-21");
        assertThat(set(A + ":1-1")).hasToString(A + ":1");
    }

    @Test
    void parsesTaggedGtidsAndPrintsUntaggedFirstThenTagsInOrder() {
        MySqlGtidSet set = set(A + ":Domain_2:8-52, " + A + ":1-5:domain_1:1-3:15-21");

        assertThat(set).hasToString(A + ":1-5:domain_1:1-3:15-21:domain_2:8-52");
        assertThat(set.containsTransaction(new MySqlGtid(A_UUID, "DOMAIN_1", 2))).isTrue();
        assertThat(set.containsTransaction(new MySqlGtid(A_UUID, "domain_1", 4))).isFalse();
        assertThat(set.containsTransaction(new MySqlGtid(A_UUID, "other", 1))).isFalse();
        assertThat(set.containsTransaction(gtid(A_UUID, 52))).as("tagged and untagged are different").isFalse();
        assertThat(set(set.toString())).isEqualTo(set);
    }

    @Test
    void treatsEmptyAndBlankTextAsTheEmptySet() {
        assertThat(set("")).isSameAs(MySqlGtidSet.EMPTY);
        assertThat(set(" \n\t")).isEqualTo(MySqlGtidSet.EMPTY);
        assertThat(MySqlGtidSet.EMPTY.isEmpty()).isTrue();
        assertThat(MySqlGtidSet.EMPTY).hasToString("");
    }

    @Test
    void skipsEmptyElementsBetweenCommasLikeMySql() {
        assertThat(set("," + A + ":1,, " + B + ":2,")).hasToString(A + ":1," + B + ":2");
    }

    @Test
    void acceptsTheLargestTransactionNumber() {
        MySqlGtidSet set = set(A + ":9223372036854775805-9223372036854775806");

        assertThat(set.containsTransaction(gtid(A_UUID, MySqlGtid.MAX_TRANSACTION))).isTrue();
        assertThat(set.with(gtid(A_UUID, 9223372036854775804L))).hasToString(A + ":9223372036854775804-9223372036854775806");
    }

    @Test
    void rejectsANonNumberAndQuotesTheWholeInput() {
        assertThatThrownBy(() -> set("3E11FA47-71CA-11E1-9E33-C80AA9429562:1-x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("bad MySQL GTID set '3E11FA47-71CA-11E1-9E33-C80AA9429562:1-x': 'x' is not a transaction"
                        + " number (at offset 39)");
    }

    @Test
    void rejectsZeroAsATransactionNumber() {
        assertThatThrownBy(() -> set(A + ":0-5"))
                .hasMessage("bad MySQL GTID set '" + A + ":0-5': '0' is not a transaction number: MySQL numbers"
                        + " transactions from 1 (at offset 37)");
    }

    @Test
    void rejectsAnIntervalThatStartsAfterItEnds() {
        assertThatThrownBy(() -> set(A + ":1-3:9-5"))
                .hasMessage("bad MySQL GTID set '" + A + ":1-3:9-5': interval '9-5' starts after it ends (at offset 41)");
    }

    @Test
    void rejectsNumbersBeyondTheLargestTransactionNumber() {
        assertThatThrownBy(() -> set(A + ":9223372036854775807"))
                .hasMessageContaining("'9223372036854775807' is beyond the largest MySQL transaction number, "
                        + "9223372036854775806 (2^63-2)");
        assertThatThrownBy(() -> set(A + ":1-99999999999999999999999"))
                .hasMessageContaining("'99999999999999999999999' is beyond the largest MySQL transaction number")
                .hasMessageContaining("(at offset 39)");
    }

    @Test
    void escapesLineEndsInTheQuotedInput() {
        assertThatThrownBy(() -> set(A + ":1,\n" + B + ":x"))
                .hasMessage("bad MySQL GTID set '" + A + ":1,\\n" + B + ":x': expected ':' and transaction numbers"
                        + " after tag 'x', found the end (at offset 78)");
    }

    @Test
    void rejectsOtherMalformedSetsNamingTheBadPart() {
        assertThatThrownBy(() -> set("3e11fa47-71ca-11e1-9e33:1")).hasMessageContaining(
                "'3e11fa47-71ca-11e1-9e33' is not a server UUID (8-4-4-4-12 hexadecimal digits) (at offset 0)");
        assertThatThrownBy(() -> set("3e11fa4g-71ca-11e1-9e33-c80aa9429562:1"))
                .hasMessageContaining("is not a server UUID");
        assertThatThrownBy(() -> set(A)).hasMessageContaining(
                "expected ':' and transaction numbers after server UUID '" + A + "', found the end (at offset 36)");
        assertThatThrownBy(() -> set(A + ":")).hasMessageContaining("expected a transaction number, found the end");
        assertThatThrownBy(() -> set(A + ":," + B + ":1")).hasMessageContaining("expected a transaction number, found ','");
        assertThatThrownBy(() -> set(A + ":-5")).hasMessageContaining("expected a transaction number, found '-'");
        assertThatThrownBy(() -> set(A + ":1-")).hasMessageContaining("expected a transaction number, found the end");
        assertThatThrownBy(() -> set(A + ":1-5x")).hasMessageContaining("'5x' is not a transaction number");
        assertThatThrownBy(() -> set(A + ":+5")).hasMessageContaining("'+5' is not a transaction number");
        assertThatThrownBy(() -> set(A + ":0x10")).hasMessageContaining("'0x10' is not a transaction number");
        assertThatThrownBy(() -> set(A + ":1 2")).hasMessageContaining(
                "unexpected '2' after transaction number '1' (expected ':', ',' or the end)");
        assertThatThrownBy(() -> set(A + ":1;" + B + ":1")).hasMessageContaining("'1;8f5c2a10' is not a transaction");
        assertThatThrownBy(() -> set(A + ":tag")).hasMessageContaining("after tag 'tag', found the end");
        assertThatThrownBy(() -> set(A + ":a:b:1")).hasMessageContaining("tag 'a' has no transaction numbers");
        assertThatThrownBy(() -> set(A + ":" + "t".repeat(33) + ":1")).hasMessageContaining("is not a GTID tag");
        assertThatThrownBy(() -> set(A + ":ta-g:1")).hasMessageContaining("after tag 'ta', found '-'");
        assertThatThrownBy(() -> set(":1")).hasMessageContaining("expected a server UUID, found ':'");
    }

    @Test
    void unionMergesPerUuid() {
        MySqlGtidSet a = set(A + ":1-5," + B + ":1");
        MySqlGtidSet b = set(A + ":6-8:10," + B + ":tag:3");

        assertThat(a.union(b)).hasToString(A + ":1-8:10," + B + ":1:tag:3");
        assertThat(a.union(MySqlGtidSet.EMPTY)).isSameAs(a);
        assertThat(a.union(set(A + ":2-3"))).isSameAs(a);
    }

    @Test
    void containsIsASupersetTest() {
        MySqlGtidSet big = set(A + ":1-10:20-30," + B + ":5");

        assertThat(big.contains(set(A + ":2-9:25," + B + ":5"))).isTrue();
        assertThat(big.contains(set(A + ":9-11"))).isFalse();
        assertThat(big.contains(set(B + ":4"))).isFalse();
        assertThat(big.contains(set(B + ":t:5"))).isFalse();
        assertThat(big.contains(MySqlGtidSet.EMPTY)).isTrue();
        assertThat(MySqlGtidSet.EMPTY.contains(big)).isFalse();
        assertThat(big.contains(big)).isTrue();
    }

    @Test
    void withAddsOneTransactionJoiningNeighbours() {
        MySqlGtidSet set = set(A + ":1-3:5-7:10");

        assertThat(set.with(gtid(A_UUID, 4))).hasToString(A + ":1-7:10");
        assertThat(set.with(gtid(A_UUID, 8))).hasToString(A + ":1-3:5-8:10");
        assertThat(set.with(gtid(A_UUID, 9))).hasToString(A + ":1-3:5-7:9-10");
        assertThat(set.with(gtid(A_UUID, 12))).hasToString(A + ":1-3:5-7:10:12");
        assertThat(set.with(gtid(B_UUID, 1))).hasToString(A + ":1-3:5-7:10," + B + ":1");
        assertThat(set.with(new MySqlGtid(A_UUID, "t", 1))).hasToString(A + ":1-3:5-7:10:t:1");
        assertThat(set.with(gtid(A_UUID, 6))).isSameAs(set);
        assertThat(set).as("unchanged").hasToString(A + ":1-3:5-7:10");
    }

    @Test
    void withFollowsAStreamOfConsecutiveTransactions() {
        MySqlGtidSet set = MySqlGtidSet.EMPTY;
        for (long n = 1; n <= 1000; n++) {
            set = set.with(gtid(A_UUID, n));
        }
        assertThat(set).isEqualTo(set(A + ":1-1000"));
    }

    @Test
    void subtractLeavesTheTransactionsTheOtherLacks() {
        MySqlGtidSet a = set(A + ":1-10," + B + ":1-3");

        assertThat(a.subtract(set(A + ":3-4:8"))).hasToString(A + ":1-2:5-7:9-10," + B + ":1-3");
        assertThat(a.subtract(set(A + ":1-20"))).hasToString(B + ":1-3");
        assertThat(a.subtract(a)).isEqualTo(MySqlGtidSet.EMPTY);
        assertThat(a.subtract(set(A + ":11-20," + B + ":t:1"))).isSameAs(a);
        assertThat(MySqlGtidSet.EMPTY.subtract(a)).isEqualTo(MySqlGtidSet.EMPTY);
    }

    @Test
    void ofBuildsTheSetOfGivenTransactions() {
        assertThat(MySqlGtidSet.of(gtid(B_UUID, 3), gtid(A_UUID, 2), gtid(A_UUID, 1)))
                .isEqualTo(set(A + ":1-2," + B + ":3"));
        assertThat(MySqlGtidSet.of()).isSameAs(MySqlGtidSet.EMPTY);
    }

    @Test
    void equalsAndHashCodeCompareValues() {
        MySqlGtidSet a = set(A + ":1-3:4-5," + B + ":7");
        MySqlGtidSet b = set(B + ":7,\n" + A.toUpperCase() + ":1-5");

        assertThat(a).isEqualTo(b).hasSameHashCodeAs(b);
        assertThat(a).isNotEqualTo(set(A + ":1-5")).isNotEqualTo(set(A + ":1-5," + B + ":t:7"));
    }
}
