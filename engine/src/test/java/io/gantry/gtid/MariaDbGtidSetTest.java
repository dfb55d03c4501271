package io.gantry.gtid;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class MariaDbGtidSetTest {

    private static MariaDbGtidSet set(String text) {
        return MariaDbGtidSet.parse(text);
    }

    private static MariaDbGtid gtid(long domain, long server, long sequence) {
        return new MariaDbGtid(domain, server, sequence);
    }

    @Test
    void roundTripsPositionsCapturedFromMariaDb() {
        assertThat(set("0-33061-47")).hasToString("0-33061-47");
        assertThat(set("0-1-5,1-2-7")).hasToString("0-1-5,1-2-7");
        assertThat(set("0-1-5,1-2-7").flavour()).isEqualTo(Flavour.MARIADB);
    }

    @Test
    void printsDomainsInAscendingOrder() {
        assertThat(set("1-2-7,0-1-5")).hasToString("0-1-5,1-2-7");
    }

    @Test
    void holdsABinlogStateWithTheDomainsPositionLast() {
        MariaDbGtidSet state = set("0-2-5,0-1-3,1-7-1");

        assertThat(state).hasToString("0-1-3,0-2-5,1-7-1");
        assertThat(state.sequence(0)).isEqualTo(5);
        assertThat(state.sequence(1)).isEqualTo(1);
        assertThat(state.sequence(2)).isZero();
        assertThat(state.position()).hasToString("0-2-5,1-7-1");
        MariaDbGtidSet position = state.position();
        assertThat(position.position()).isSameAs(position);
        assertThat(state.gtids()).containsExactly(gtid(0, 1, 3), gtid(0, 2, 5), gtid(1, 7, 1));
    }

    @Test
    void keepsTheHighestSequenceOfARepeatedDomainAndServer() {
        assertThat(set("0-1-5,0-1-3")).hasToString("0-1-5");
    }

    @Test
    void breaksATieBetweenServersByServerId() {
        MariaDbGtidSet diverged = set("0-9-5,0-2-5");

        assertThat(diverged).hasToString("0-2-5,0-9-5");
        assertThat(diverged.position()).hasToString("0-9-5");
    }

    @Test
    void ignoresEntriesWithSequenceZero() {
        assertThat(set("0-1-0")).isEqualTo(MariaDbGtidSet.EMPTY);
        assertThat(set("0-1-0,1-1-3")).hasToString("1-1-3");
    }

    @Test
    void treatsEmptyAndBlankTextAsTheEmptySetAndAllowsBlanksAroundEntries() {
        assertThat(set("")).isSameAs(MariaDbGtidSet.EMPTY);
        assertThat(set(" \n")).isEqualTo(MariaDbGtidSet.EMPTY);
        assertThat(MariaDbGtidSet.EMPTY.isEmpty()).isTrue();
        assertThat(MariaDbGtidSet.EMPTY).hasToString("");
        assertThat(set(" 0-1-5 ,\n1-2-7\n")).hasToString("0-1-5,1-2-7");
    }

    @Test
    void rejectsMalformedSetsQuotingTheWholeInputAndTheBadPart() {
        assertThatThrownBy(() -> set("0-1-5,1-2-x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("bad MariaDB GTID set '0-1-5,1-2-x': 'x' is not a sequence number (at offset 10)");
        assertThatThrownBy(() -> set("0-1-5,\n1-2"))
                .hasMessage("bad MariaDB GTID set '0-1-5,\\n1-2': '1-2' is not a GTID (expected"
                        + " domain-server-sequence, e.g. 0-1-42) (at offset 7)");
        assertThatThrownBy(() -> set("0-1-2-3")).hasMessageContaining("'0-1-2-3' is not a GTID");
        assertThatThrownBy(() -> set("a-1-2")).hasMessageContaining("'a' is not a domain id (at offset 0)");
        assertThatThrownBy(() -> set("0-b-2")).hasMessageContaining("'b' is not a server id (at offset 2)");
        assertThatThrownBy(() -> set("0--2")).hasMessageContaining("'0--2' has no server id (at offset 2)");
        assertThatThrownBy(() -> set("-1-1-1")).hasMessageContaining("is not a GTID");
        assertThatThrownBy(() -> set("0-+1-2")).hasMessageContaining("'+1' is not a server id");
        assertThatThrownBy(() -> set(",0-1-1")).hasMessageContaining("expected domain-server-sequence, found ','");
        assertThatThrownBy(() -> set("0-1-1,,1-1-1")).hasMessageContaining("found ',' (at offset 6)");
        assertThatThrownBy(() -> set("0-1-1,")).hasMessageContaining("after ',', found the end");
        assertThatThrownBy(() -> set("0-1-1 1-1-1")).hasMessageContaining(
                "unexpected '1' after GTID '0-1-1' (expected ',' or the end) (at offset 6)");
        assertThatThrownBy(() -> set("0-4294967296-1")).hasMessageContaining(
                "'4294967296' is beyond the largest server id, 4294967295 (2^32-1)");
        assertThatThrownBy(() -> set("0-1-18446744073709551615")).hasMessageContaining(
                "'18446744073709551615' is beyond the largest sequence number, 9223372036854775807 (2^63-1)");
    }

    @Test
    void containsATransactionWhenItsDomainHasReachedItsSequenceWhicheverServer() {
        MariaDbGtidSet position = set("0-1-10,1-2-3");

        assertThat(position.containsTransaction(gtid(0, 1, 10))).isTrue();
        assertThat(position.containsTransaction(gtid(0, 1, 1))).isTrue();
        assertThat(position.containsTransaction(gtid(0, 7, 9))).as("server id does not matter").isTrue();
        assertThat(position.containsTransaction(gtid(0, 1, 11))).isFalse();
        assertThat(position.containsTransaction(gtid(1, 2, 4))).isFalse();
        assertThat(position.containsTransaction(gtid(2, 1, 1))).isFalse();
    }

    @Test
    void containsComparesTheHighestSequencePerDomain() {
        MariaDbGtidSet position = set("0-1-10,1-2-3");

        assertThat(position.contains(set("0-2-9"))).isTrue();
        assertThat(position.contains(set("0-2-9,1-1-3"))).isTrue();
        assertThat(position.contains(set("1-5-4"))).isFalse();
        assertThat(position.contains(set("5-1-1"))).isFalse();
        assertThat(position.contains(MariaDbGtidSet.EMPTY)).isTrue();
        assertThat(MariaDbGtidSet.EMPTY.contains(position)).isFalse();
    }

    @Test
    void setsMayContainEachOtherWithoutBeingEqual() {
        MariaDbGtidSet a = set("0-1-5");
        MariaDbGtidSet b = set("0-1-3,0-2-5");

        assertThat(a.contains(b)).isTrue();
        assertThat(b.contains(a)).isTrue();
        assertThat(a).isNotEqualTo(b);
    }

    @Test
    void containsPerServerRefusesADivergedCandidate() {
        MariaDbGtidSet applied = set("0-1-10");

        assertThat(set("0-1-8,0-2-10").contains(applied)).isTrue();
        assertThat(set("0-1-8,0-2-10").containsPerServer(applied)).isFalse();
        assertThat(set("0-1-10,0-2-11").containsPerServer(applied)).isTrue();
        assertThat(set("0-2-11").containsPerServer(applied)).isFalse();
        assertThat(applied.containsPerServer(MariaDbGtidSet.EMPTY)).isTrue();
    }

    @Test
    void unionKeepsTheHighestSequencePerDomainAndServer() {
        MariaDbGtidSet a = set("0-1-5,2-1-1");
        MariaDbGtidSet b = set("0-2-7,0-1-3,1-1-1");

        assertThat(a.union(b)).hasToString("0-1-5,0-2-7,1-1-1,2-1-1");
        assertThat(a.union(b).position()).hasToString("0-2-7,1-1-1,2-1-1");
        assertThat(a.union(set("0-1-4"))).isSameAs(a);
        assertThat(MariaDbGtidSet.EMPTY.union(a)).isSameAs(a);
    }

    @Test
    void withAdvancesTheDomainAsAStreamApplies() {
        MariaDbGtidSet position = set("0-1-5,1-1-2");

        assertThat(position.with(gtid(0, 1, 6))).hasToString("0-1-6,1-1-2");
        assertThat(position.with(gtid(0, 2, 6))).hasToString("0-1-5,0-2-6,1-1-2");
        assertThat(position.with(gtid(2, 1, 1))).hasToString("0-1-5,1-1-2,2-1-1");
        assertThat(position.with(gtid(0, 1, 5))).isSameAs(position);
        assertThat(position.with(gtid(0, 1, 4))).isSameAs(position);
        assertThat(position).as("unchanged").hasToString("0-1-5,1-1-2");
    }

    @Test
    void withRecordsAnotherServersOlderTransactionWithoutMovingThePosition() {
        MariaDbGtidSet position = set("0-1-10");
        MariaDbGtidSet after = position.with(gtid(0, 2, 4));

        assertThat(after).hasToString("0-2-4,0-1-10");
        assertThat(after.sequence(0)).isEqualTo(10);
        assertThat(after.with(gtid(0, 2, 12))).hasToString("0-1-10,0-2-12");
    }

    @Test
    void withFollowsAStreamAcrossAFailover() {
        MariaDbGtidSet position = MariaDbGtidSet.EMPTY;
        for (long n = 1; n <= 100; n++) {
            position = position.with(gtid(0, 1, n));
        }
        for (long n = 101; n <= 150; n++) {
            position = position.with(gtid(0, 2, n));
        }
        assertThat(position).hasToString("0-1-100,0-2-150");
        assertThat(position.position()).hasToString("0-2-150");
    }

    @Test
    void ofBuildsASetFromGtids() {
        assertThat(MariaDbGtidSet.of(gtid(1, 2, 7), gtid(0, 1, 5), gtid(0, 1, 2))).isEqualTo(set("0-1-5,1-2-7"));
        assertThat(MariaDbGtidSet.of()).isSameAs(MariaDbGtidSet.EMPTY);
    }

    @Test
    void equalsAndHashCodeCompareValues() {
        MariaDbGtidSet a = set("1-2-7,0-1-5");
        MariaDbGtidSet b = set("0-1-5,\n1-2-7");

        assertThat(a).isEqualTo(b).hasSameHashCodeAs(b);
        assertThat(a).isNotEqualTo(set("0-1-5")).isNotEqualTo(set("0-1-5,1-3-7"));
    }
}
