/**
 * The Authority: Gantry's own embedded H2 database under {@code --data-dir}, holding what must survive a restart
 * and what operators look back on.
 *
 * <ul>
 *   <li>{@link io.gantry.authority.Authority}: the store's API (server lists, health history, events, CDC
 *       position, the live {@code gantry.upstream_servers} table, read-only admin SQL). Behind it,
 *       {@code AuthorityDatabase} holds the connections and runs every statement, and one package-private store
 *       class per table holds that table's SQL.</li>
 *   <li>{@link io.gantry.authority.Pruner} and {@link io.gantry.authority.Retention}: {@code --health-retention}
 *       and the hourly pruning of old samples and events.</li>
 * </ul>
 *
 * <p>Tables, all in schema {@code GANTRY} (queried as {@code gantry.xxx}; H2 folds unquoted names to upper case):
 * {@code server_list}, {@code health_history}, {@code events}, {@code cdc_position}, {@code upstream_servers} and
 * {@code schema_version}. Two choices a reader of the manual should know:
 * <ul>
 *   <li>No password is ever stored: the lists keep host, port, database, user and weight; the password comes from
 *       the command line (or the statement that changed the list) at runtime.</li>
 *   <li>In H2, a bare {@code user} is the function {@code CURRENT_USER}; the column of
 *       {@code gantry.upstream_servers} is reached as {@code `user`}, {@code "USER"}, {@code u.user} or through
 *       {@code *}.</li>
 * </ul>
 *
 * <p>This package depends on no other engine package; callers translate their own types into its records.
 */
package io.gantry.authority;
