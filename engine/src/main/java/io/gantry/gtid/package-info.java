/**
 * GTID sets of both flavours — MySQL ({@code uuid:1-5:7-9,...}) and MariaDB ({@code domain-server-seq,...}) — and
 * their algebra: parse, print, union, containment, "is this transaction in the set". Pure values, shared by
 * {@code topology} (replication lag from positions) and {@code cdc} (resuming a stream without loss or repeat).
 */
package io.gantry.gtid;
