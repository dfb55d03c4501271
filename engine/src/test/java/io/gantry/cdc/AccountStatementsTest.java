package io.gantry.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class AccountStatementsTest {

    @ParameterizedTest
    @ValueSource(strings = {"GRANT SELECT ON app.t TO 'a'@'%'", "revoke select on app.t from 'a'@'%'",
        "DROP USER 'a'@'%'", "CREATE USER 'a'@'%' IDENTIFIED BY 'x'", "ALTER USER 'a'@'%' ACCOUNT LOCK",
        "RENAME USER 'a'@'%' TO 'b'@'%'", "CREATE ROLE reader", "DROP ROLE reader", "SET DEFAULT ROLE reader FOR a",
        "SET PASSWORD FOR 'a'@'%' = PASSWORD('x')", "FLUSH PRIVILEGES",
        "/* xid=12 */ GRANT SELECT ON *.* TO a", "  \n GRANT ALL ON app.* TO a"})
    void statementsThatChangeWhatAnAccountMayReadAreRecognised(String sql) {
        assertThat(AccountStatements.changesAccounts(sql)).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"BEGIN", "COMMIT", "CREATE TABLE grants (id INT)", "INSERT INTO grant_log VALUES (1)",
        "DROP TABLE users", "ALTER TABLE user ADD COLUMN x INT", "SET @role = 1", "GRANTED", "FLUSH TABLES",
        "/* GRANT */ CREATE TABLE t (id INT)"})
    void otherStatementsAreNot(String sql) {
        assertThat(AccountStatements.changesAccounts(sql)).isFalse();
    }

    @ParameterizedTest
    @CsvSource({"mysql,global_priv,true", "MYSQL,User,true", "mysql,db,true", "mysql,roles_mapping,true",
        "mysql,tables_priv,true", "mysql,time_zone,false", "app,user,false", "app,global_priv,false"})
    void rowsOfTheGrantTablesChangeAccounts(String database, String table, boolean grants) {
        assertThat(AccountStatements.isGrantTable(database, table)).isEqualTo(grants);
    }
}
