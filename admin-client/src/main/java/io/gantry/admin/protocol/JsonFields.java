package io.gantry.admin.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.time.format.DateTimeParseException;

/**
 * Reads typed fields out of a message's JSON object, for {@link AdminProtocol}'s decoders. A field that is missing or
 * of the wrong type is a {@link BadMessage} ({@code invalid_request}) that names the field, what it must be and the
 * value found, so the other side can tell what to fix. {@code optional} readers take JSON {@code null} as absent.
 */
final class JsonFields {

    private JsonFields() {
    }

    static String requiredText(JsonNode node, String field) throws BadMessage {
        JsonNode value = node.get(field);
        if (value == null || !value.isTextual()) {
            throw invalid(field, "a string", value);
        }
        return value.asText();
    }

    static String optionalText(JsonNode node, String field, String otherwise) throws BadMessage {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return otherwise;
        }
        if (!value.isTextual()) {
            throw invalid(field, "a string", value);
        }
        return value.asText();
    }

    static long requiredLong(JsonNode node, String field) throws BadMessage {
        JsonNode value = node.get(field);
        if (value == null || !value.isIntegralNumber() || !value.canConvertToLong()) {
            throw invalid(field, "a whole number", value);
        }
        return value.asLong();
    }

    static int requiredInt(JsonNode node, String field) throws BadMessage {
        JsonNode value = node.get(field);
        if (value == null || !value.isIntegralNumber() || !value.canConvertToInt()) {
            throw invalid(field, "a whole number", value);
        }
        return value.asInt();
    }

    static int optionalInt(JsonNode node, String field, int otherwise) throws BadMessage {
        JsonNode value = node.get(field);
        return value == null || value.isNull() ? otherwise : requiredInt(node, field);
    }

    static Long optionalLong(JsonNode node, String field) throws BadMessage {
        JsonNode value = node.get(field);
        return value == null || value.isNull() ? null : requiredLong(node, field);
    }

    static Double optionalDouble(JsonNode node, String field) throws BadMessage {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isNumber()) {
            throw invalid(field, "a number", value);
        }
        return value.asDouble();
    }

    static boolean requiredBoolean(JsonNode node, String field) throws BadMessage {
        JsonNode value = node.get(field);
        if (value == null || !value.isBoolean()) {
            throw invalid(field, "true or false", value);
        }
        return value.asBoolean();
    }

    static Instant requiredInstant(JsonNode node, String field) throws BadMessage {
        Instant at = optionalInstant(node, field);
        if (at == null) {
            throw invalid(field, "an ISO-8601 time such as 2026-11-30T21:00:00Z", node.get(field));
        }
        return at;
    }

    static Instant optionalInstant(JsonNode node, String field) throws BadMessage {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isTextual()) {
            throw invalid(field, "an ISO-8601 time such as 2026-11-30T21:00:00Z", value);
        }
        return parseInstant(field, value.asText());
    }

    /** {@code text}, the value of {@code field}, as an instant. */
    static Instant parseInstant(String field, String text) throws BadMessage {
        try {
            return Instant.parse(text);
        } catch (DateTimeParseException e) {
            throw new BadMessage("invalid_request", "'" + field + "' must be an ISO-8601 time such as "
                    + "2026-11-30T21:00:00Z, not \"" + text + "\"");
        }
    }

    static JsonNode requiredObject(JsonNode node, String field) throws BadMessage {
        JsonNode value = node.get(field);
        if (value == null || !value.isObject()) {
            throw invalid(field, "an object", value);
        }
        return value;
    }

    static Iterable<JsonNode> array(JsonNode node, String field) throws BadMessage {
        JsonNode value = node.get(field);
        if (value == null || !value.isArray()) {
            throw invalid(field, "an array", value);
        }
        return value;
    }

    /** {@code 'field' must be <expected>, not <found>}. */
    static BadMessage invalid(String field, String expected, JsonNode found) {
        return new BadMessage("invalid_request", "'" + field + "' must be " + expected + ", not " + describe(found));
    }

    /** A value as an error message shows it: {@code missing}, or its JSON cut to 60 characters. */
    static String describe(JsonNode node) {
        if (node == null) {
            return "missing";
        }
        String text = node.toString();
        return text.length() > 60 ? text.substring(0, 57) + "..." : text;
    }
}
