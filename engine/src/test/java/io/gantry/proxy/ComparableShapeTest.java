package io.gantry.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ComparableShapeTest {

    @Test
    void aGantryShapeAMariaDbDigestAndAPreparedTextOfOneStatementAreOneKey() {
        String key = "SELECT SUM ( K ) FROM SBTEST1 WHERE ID BETWEEN ? AND ?";
        assertThat(ComparableShape.of("SELECT SUM ( k ) FROM sbtest1 WHERE id BETWEEN ? AND ?")).isEqualTo(key);
        assertThat(ComparableShape.of("SELECT SUM ( `k` ) FROM `sbtest1` WHERE ID BETWEEN ? AND ? ")).isEqualTo(key);
        assertThat(ComparableShape.of("SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?")).isEqualTo(key);
        assertThat(ComparableShape.of("SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 10 AND 109")).isEqualTo(key);
    }

    @Test
    void valuesListsLiteralsAndDistinctRowAreSpelledOneWay() {
        String insert = "INSERT INTO SBTEST1 ( ID , K , C , PAD ) VALUES ( ... )";
        assertThat(ComparableShape.of("INSERT INTO `sbtest1` ( ID , `k` , `c` , `pad` ) VALUES (...) "))
                .isEqualTo(insert);
        assertThat(ComparableShape.of("INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)")).isEqualTo(insert);
        assertThat(ComparableShape.of("INSERT INTO sbtest1 (id, k, c, pad) VALUES (5, 7, 'it''s', \"a\\\"b\")"))
                .isEqualTo(insert);
        assertThat(ComparableShape.of("UPDATE sbtest1 SET k=k+1 WHERE id=?"))
                .isEqualTo(ComparableShape.of("UPDATE `sbtest1` SET `k` = `k` + ? WHERE ID = ? "))
                .isEqualTo("UPDATE SBTEST1 SET K = K + ? WHERE ID = ?");
        assertThat(ComparableShape.of("SELECT DISTINCTROW `c` FROM `sbtest1` WHERE ID BETWEEN ? AND ? ORDER BY `c`"))
                .isEqualTo(ComparableShape.of("SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c"));
    }

    @Test
    void differentStatementsStayDifferent() {
        assertThat(ComparableShape.of("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?"))
                .isNotEqualTo(ComparableShape.of("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c"));
        assertThat(ComparableShape.of("UPDATE sbtest1 SET c=? WHERE id=?"))
                .isNotEqualTo(ComparableShape.of("UPDATE sbtest1 SET k=k+1 WHERE id=?"));
        assertThat(ComparableShape.of("SELECT c FROM sbtest1 WHERE id = ?"))
                .isNotEqualTo(ComparableShape.of("SELECT c FROM sbtest2 WHERE id = ?"));
    }
}
