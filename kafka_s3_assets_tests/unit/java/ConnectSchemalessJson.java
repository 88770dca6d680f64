import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * What Kafka Connect writes for a record value under Kafka's JsonConverter (schemas.enable=false) and
 * Confluent's JsonFormat, done with Jackson as those classes do it (this is our own code, written from
 * their behaviour; connect-json is not on this machine, Jackson is, in pyspark's jars):
 *
 *   read:    an ObjectMapper with ALLOW_LEADING_ZEROS_FOR_NUMBERS (JsonDeserializer) and
 *            USE_BIG_DECIMAL_FOR_FLOATS (JsonConverter's deserializer), a JsonNodeFactory with exact
 *            decimals, readTree(bytes);
 *   convert: as JsonConverter.convertToConnect(null, node): null and missing -> null, integral numbers
 *            -> Long (longValue()), other numbers -> Double (doubleValue()), arrays -> ArrayList, objects
 *            -> HashMap, recursively;
 *   write:   as JsonRecordWriterProvider: a fresh ObjectMapper's generator on the object's stream with
 *            no root value separator, writeObject(value), then writeRaw(System.lineSeparator()).
 *
 * Modes (first argument):
 *   values   stdin: one base64 value a line. stdout, a line per value: "OK <base64 of the bytes
 *            written>", "NULL" (a null value: Connect's tombstone handling decides), or
 *            "ERR <base64 of the reading error's class name, ': ', message>" (the converter fails),
 *            or "WERR <base64 of the same for the writing error>" (JsonFormat fails).
 *   doubles  stdin: one double a line as 16 hex digits of its bits. stdout: Double.toString of each.
 *   versions stdout: the Jackson and Java versions in use.
 */
public class ConnectSchemalessJson {
    private static final ObjectMapper WRITER = new ObjectMapper();

    /**
     * A mapper as Kafka's JsonConverter configures its deserializer's. A new one for each value: a
     * long-lived mapper looks member names up in a table of the names it read before, by their bytes
     * padded with 0xFF, so a name holding the byte 0xFF (never valid UTF-8) may come back as a name read
     * earlier instead of failing; a fresh one answers for the value alone.
     */
    static ObjectMapper reader() {
        ObjectMapper reader = new ObjectMapper();
        reader.enable(JsonReadFeature.ALLOW_LEADING_ZEROS_FOR_NUMBERS.mappedFeature());
        reader.enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);
        reader.setNodeFactory(new JsonNodeFactory(true));
        return reader;
    }

    static Object toConnect(JsonNode node) {
        switch (node.getNodeType()) {
            case NULL:
            case MISSING:
                return null;
            case BOOLEAN:
                return node.booleanValue();
            case NUMBER:
                if (node.isIntegralNumber()) {
                    return node.longValue();
                }
                return node.doubleValue();
            case STRING:
                return node.textValue();
            case ARRAY: {
                List<Object> list = new ArrayList<>();
                for (JsonNode element : node) {
                    list.add(toConnect(element));
                }
                return list;
            }
            case OBJECT: {
                Map<Object, Object> map = new HashMap<>();
                Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
                while (fields.hasNext()) {
                    Map.Entry<String, JsonNode> field = fields.next();
                    map.put(field.getKey(), toConnect(field.getValue()));
                }
                return map;
            }
            default:
                throw new IllegalStateException("Unknown schema type: null");
        }
    }

    static String describe(Throwable e) {
        String text = e.getClass().getName() + ": " + e.getMessage();
        return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
    }

    static String value(byte[] bytes) {
        Object value;
        try {
            value = toConnect(reader().readTree(bytes));
        } catch (Exception e) {
            return "ERR " + describe(e);
        }
        if (value == null) {
            return "NULL";
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (JsonGenerator generator = WRITER.getFactory().createGenerator(out).setRootValueSeparator(null)) {
            generator.writeObject(value);
            generator.writeRaw(System.lineSeparator());
        } catch (Exception e) {
            return "WERR " + describe(e);
        }
        return "OK " + Base64.getEncoder().encodeToString(out.toByteArray());
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "values";
        if (mode.equals("versions")) {
            System.out.println("jackson-core " + com.fasterxml.jackson.core.json.PackageVersion.VERSION);
            System.out.println("jackson-databind " + com.fasterxml.jackson.databind.cfg.PackageVersion.VERSION);
            System.out.println("java " + System.getProperty("java.version"));
            return;
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        StringBuilder out = new StringBuilder();
        String line;
        while ((line = in.readLine()) != null) {
            switch (mode) {
                case "values":
                    out.append(value(Base64.getDecoder().decode(line)));
                    break;
                case "doubles":
                    out.append(Double.toString(Double.longBitsToDouble(Long.parseUnsignedLong(line, 16))));
                    break;
                default:
                    throw new IllegalArgumentException("unknown mode " + mode);
            }
            out.append('\n');
        }
        System.out.print(out);
    }
}
