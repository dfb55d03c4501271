package io.gantry.cli;

import io.gantry.topology.UpstreamUrl;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Passwords kept off the command line: read from a password file or from an environment variable, and given to
 * the URLs written without one ({@code mysql://app@host:3306/db}). A password file must be readable by its owner
 * only, as ssh requires of a private key: one that group or others may read is refused, naming the file.
 */
final class Secrets {

    static final String UPSTREAM_PASSWORD_VARIABLE = "GANTRY_UPSTREAM_PASSWORD";
    static final String CDC_PASSWORD_VARIABLE = "GANTRY_CDC_PASSWORD";

    private static final Set<PosixFilePermission> NOT_FOR_OTHERS = Set.of(PosixFilePermission.GROUP_READ,
            PosixFilePermission.OTHERS_READ);

    private Secrets() {
    }

    /**
     * The password from {@code file} (its {@code flag} named in errors) or from the environment {@code variable};
     * empty when neither is given. Both at once are refused: one of them would be silently ignored.
     */
    static Optional<String> password(String flag, Path file, String variable, Map<String, String> environment) {
        String fromEnvironment = environment.get(variable);
        if (file != null && fromEnvironment != null) {
            throw new IllegalArgumentException(flag + " and the environment variable " + variable
                    + " both give a password: keep one");
        }
        if (file != null) {
            return Optional.of(readPasswordFile(flag, file));
        }
        return Optional.ofNullable(fromEnvironment);
    }

    /**
     * The file's content without one line ending at its end (as {@code echo secret > file} writes it).
     *
     * @throws IllegalArgumentException naming the file when it cannot be read, is empty, or group or others may
     *                                  read it
     */
    static String readPasswordFile(String flag, Path file) {
        try {
            PosixFileAttributeView posix = Files.getFileAttributeView(file, PosixFileAttributeView.class);
            if (posix != null) {
                Set<PosixFilePermission> permissions = posix.readAttributes().permissions();
                if (permissions.stream().anyMatch(NOT_FOR_OTHERS::contains)) {
                    throw new IllegalArgumentException(flag + " " + file + " may be read by group or others (mode "
                            + PosixFilePermissions.toString(permissions) + "): a password file must be readable "
                            + "by its owner only; chmod 600 " + file);
                }
            }
            String content = Files.readString(file, StandardCharsets.UTF_8);
            String password = content.endsWith("\r\n") ? content.substring(0, content.length() - 2)
                    : content.endsWith("\n") ? content.substring(0, content.length() - 1) : content;
            if (password.isEmpty()) {
                throw new IllegalArgumentException(flag + " " + file + " is empty");
            }
            return password;
        } catch (java.nio.file.NoSuchFileException e) {
            throw new IllegalArgumentException(flag + " " + file + ": no such file");
        } catch (java.nio.file.AccessDeniedException e) {
            throw new IllegalArgumentException(flag + " " + file + ": permission denied");
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read " + flag + " " + file + ": " + e);
        }
    }

    /** The list with {@code password} given to every URL written without one. */
    static List<UpstreamUrl> fillIn(List<UpstreamUrl> urls, Optional<String> password) {
        return password.map(secret -> urls.stream()
                        .map(url -> url.password().isEmpty() ? url.withPassword(secret) : url).toList())
                .orElse(urls);
    }

    /** Whether any URL of the list carries its own password. */
    static boolean anyWrittenPassword(List<UpstreamUrl> urls) {
        return urls.stream().anyMatch(url -> !url.password().isEmpty());
    }
}
