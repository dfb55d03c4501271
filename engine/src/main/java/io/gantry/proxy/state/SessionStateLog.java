package io.gantry.proxy.state;

import io.gantry.route.SqlTokenizer;
import io.gantry.wire.CommandType;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The session-state commands a client ran ({@code SET NAMES}, {@code SET sql_mode}, {@code USE db}, COM_INIT_DB,
 * COM_SET_OPTION, ...), so that any backend connection of the session can be brought to the same state before it
 * runs a statement. Each distinct command is kept once, at the version of its latest run: replaying in version
 * order reproduces the final state (a later {@code SET autocommit=1} after {@code SET autocommit=0} comes later).
 */
public final class SessionStateLog {

    /** Beyond this many distinct commands the session stops replaying and stays on the primary. */
    public static final int MAX_DISTINCT_COMMANDS = 256;

    private final Map<ByteBuffer, Long> versionByCommand = new HashMap<>();
    /** The command recorded last under each key ({@link #record(String, byte[])}): what a newer one replaces. */
    private final Map<String, ByteBuffer> commandByKey = new HashMap<>();
    /** The setting recorded last for each variable ({@link #recordSetting}): what a newer one replaces. */
    private final Map<String, ByteBuffer> settingByVariable = new HashMap<>();
    private long version;
    private boolean changedDatabase;
    /** The database the latest recorded {@code USE} or COM_INIT_DB chose, or null when none did. */
    private String database;
    private String contents = "";
    private long contentsVersion;
    private String settingsContents = "";
    private long settingsVersion;

    /** The version after the latest recorded command; a backend that applied up to here is in sync. */
    public long version() {
        return version;
    }

    /** How many distinct commands the log holds. */
    public int size() {
        return versionByCommand.size();
    }

    public boolean isFull() {
        return versionByCommand.size() >= MAX_DISTINCT_COMMANDS;
    }

    /** Records a command payload (command byte included) that succeeded; returns the new version. */
    public long record(byte[] commandPayload) {
        if (changesDatabase(commandPayload)) {
            changedDatabase = true;
            database = databaseOf(commandPayload);
        }
        version++;
        versionByCommand.put(ByteBuffer.wrap(commandPayload.clone()), version);
        return version;
    }

    /**
     * Records a command that replaces the one recorded before under the same {@code key} (a user variable's new
     * value replaces its old one, so the log does not grow with every assignment); returns the new version.
     */
    public long record(String key, byte[] commandPayload) {
        ByteBuffer previous = commandByKey.put(key, ByteBuffer.wrap(commandPayload.clone()));
        if (previous != null) {
            versionByCommand.remove(previous);
        }
        return record(commandPayload);
    }

    /**
     * Records a setting that replaces the one recorded before for the same {@code variable} (see
     * {@code SettingReplay.replacesKey}): {@code SET time_zone = '+00:00'} after {@code SET time_zone = 'Europe/Paris'}
     * leaves only the former to replay, so a connection that could not take the older value (a server without time
     * zone names) is not refused it again. Unlike a user variable's, it stays part of {@link #settingsContents()}.
     */
    public long recordSetting(String variable, byte[] commandPayload) {
        ByteBuffer command = ByteBuffer.wrap(commandPayload.clone());
        ByteBuffer previous = settingByVariable.put(variable, command);
        if (previous != null && !previous.equals(command)) {
            versionByCommand.remove(previous);
        }
        return record(commandPayload);
    }

    /** Whether a connection that applied {@code appliedVersion} has every setting (nothing {@link #since}). */
    public boolean upTo(long appliedVersion) {
        return appliedVersion >= version;
    }

    /** Commands to replay, in order, on a backend that is in sync up to {@code appliedVersion}. */
    public List<byte[]> since(long appliedVersion) {
        if (upTo(appliedVersion)) {
            return List.of(); // the usual case, asked before every command
        }
        List<Map.Entry<ByteBuffer, Long>> newer = new ArrayList<>();
        for (Map.Entry<ByteBuffer, Long> entry : versionByCommand.entrySet()) {
            if (entry.getValue() > appliedVersion) {
                newer.add(entry);
            }
        }
        newer.sort(Comparator.comparingLong(Map.Entry::getValue));
        List<byte[]> commands = new ArrayList<>(newer.size());
        for (Map.Entry<ByteBuffer, Long> entry : newer) {
            ByteBuffer buffer = entry.getKey().duplicate();
            byte[] bytes = new byte[buffer.remaining()];
            buffer.get(bytes);
            commands.add(bytes);
        }
        return commands;
    }

    /**
     * One recorded command, for a take-over: its payload, and the user variable ({@code key}) or setting it replaces
     * the older command of, or neither.
     */
    public record Recorded(byte[] payload, String key, String setting) {
    }

    /** Every recorded command in replay order, each with what it replaces: {@link #restore} records them again. */
    public List<Recorded> recorded() {
        Map<ByteBuffer, String> keys = new HashMap<>();
        commandByKey.forEach((key, command) -> keys.put(command, key));
        Map<ByteBuffer, String> settings = new HashMap<>();
        settingByVariable.forEach((variable, command) -> settings.put(command, variable));
        List<Recorded> out = new ArrayList<>();
        for (byte[] command : since(0)) {
            ByteBuffer wrapped = ByteBuffer.wrap(command);
            out.add(new Recorded(command, keys.get(wrapped), settings.get(wrapped)));
        }
        return out;
    }

    /** Records {@code commands} ({@link #recorded} of another process's session) in order, after a {@link #clear}. */
    public void restore(List<Recorded> commands) {
        clear();
        for (Recorded command : commands) {
            if (command.key() != null) {
                record(command.key(), command.payload());
            } else if (command.setting() != null) {
                recordSetting(command.setting(), command.payload());
            } else {
                record(command.payload());
            }
        }
    }

    /** Forgets everything (COM_RESET_CONNECTION). */
    public void clear() {
        versionByCommand.clear();
        commandByKey.clear();
        settingByVariable.clear();
        changedDatabase = false;
        database = null;
        version++;
    }

    /** Whether a recorded command changed the default database ({@code USE}, COM_INIT_DB). */
    public boolean changedDatabase() {
        return changedDatabase;
    }

    /** The default database a recorded command chose last ({@code USE}, COM_INIT_DB), or null when none did. */
    public String database() {
        return database;
    }

    /**
     * Every recorded command in replay order, as one text: what a pooled connection that applied them all has, so
     * that a session with the same text can take it as it is.
     */
    public String contents() {
        if (contentsVersion != version) {
            contents = joined(false);
            contentsVersion = version;
        }
        return contents;
    }

    /**
     * {@link #contents()} without the commands recorded under a key (user variables' values): two sessions with the
     * same text read results in the same form (character sets, time zone, SQL mode), so the query caches tell result
     * formats apart by it, and a session's variables play no part in a cached result.
     */
    public String settingsContents() {
        if (settingsVersion != version) {
            settingsContents = joined(true);
            settingsVersion = version;
        }
        return settingsContents;
    }

    private String joined(boolean settingsOnly) {
        StringBuilder text = new StringBuilder();
        for (byte[] command : since(0)) {
            if (!settingsOnly || !commandByKey.containsValue(ByteBuffer.wrap(command))) {
                text.append(new String(command, StandardCharsets.ISO_8859_1)).append('\0');
            }
        }
        return text.toString();
    }

    /** The database of a {@code USE name} text or a COM_INIT_DB (one char per byte, as the query path reads text). */
    private static String databaseOf(byte[] payload) {
        String text = new String(payload, 1, payload.length - 1, StandardCharsets.ISO_8859_1);
        if (payload[0] == CommandType.COM_INIT_DB.code()) {
            return text;
        }
        List<SqlTokenizer.Token> tokens = SqlTokenizer.tokenize(text, false);
        return tokens.size() > 1 ? tokens.get(1).identifier(text) : null;
    }

    private static boolean changesDatabase(byte[] payload) {
        if (payload.length > 0 && payload[0] == CommandType.COM_INIT_DB.code()) {
            return true;
        }
        int at = 1;
        while (at < payload.length && Character.isWhitespace(payload[at])) {
            at++;
        }
        return payload.length > at + 3 && (payload[at] | 0x20) == 'u' && (payload[at + 1] | 0x20) == 's'
                && (payload[at + 2] | 0x20) == 'e' && Character.isWhitespace(payload[at + 3]);
    }
}
