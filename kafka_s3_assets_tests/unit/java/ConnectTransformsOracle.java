import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TimeZone;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.Values;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.transforms.Transformation;
import org.apache.kafka.connect.transforms.predicates.Predicate;

/** Kafka Connect's own transforms and predicates applied to records, one JSON request per stdin line, one
 *  JSON answer per stdout line (the oracle of test_transforms_kafka_oracle.py).
 *
 *  Request: {"transforms": [{"class", "props", "predicate": {"class", "props"} (optional), "negate"}],
 *  "record": {"topic", "partition", "offset", "timestamp" (or null), "key", "value" (each a JsonConverter
 *  envelope {"schema", "payload"}, "schema": null for schemaless data, or null for null bytes),
 *  "headers": [[name, envelope or null], ...]}}.
 *
 *  The record is a SinkRecord whose key, value and headers Kafka's JsonConverter (schemas.enable=true) read
 *  from those envelopes; each transform is configured as a Connect worker configures it (its props with
 *  "type"), each predicate too, and the chain applied as TransformationChain and TransformationStage apply
 *  it. Answer: {"config_error": {"index", "class", "message"}} when a transform or predicate refuses its
 *  props; {"error": {"stage": "input" | "transform" | "output", "index", "class", "message"}} when reading
 *  the record, a transform (or its predicate), or writing the result fails; {"dropped": true}; else
 *  {"topic", "partition", "timestamp", "key", "value", "headers"}: the key and value as the texts
 *  JsonConverter.fromConnectData writes with schemas.enable=true (replace.null.with.default=false, so a null
 *  field shows as null) or null, each header as [name, Values.convertToString(schema, value)].
 *
 *  The JVM's default time zone is UTC, as kafka_s3_assets assumes (docs/transforms.md). */
public class ConnectTransformsOracle {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        TimeZone.setDefault(TimeZone.getTimeZone("UTC"));
        JsonConverter reader = new JsonConverter();
        reader.configure(Map.of("schemas.enable", "true", "converter.type", "value"));
        JsonConverter writer = new JsonConverter();
        writer.configure(Map.of("schemas.enable", "true", "converter.type", "value", "replace.null.with.default", "false"));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            out.println(MAPPER.writeValueAsString(answer(MAPPER.readTree(line), reader, writer)));
        }
        out.flush();
    }

    private static ObjectNode answer(JsonNode request, JsonConverter reader, JsonConverter writer) {
        List<Transformation<SinkRecord>> transforms = new ArrayList<>();
        List<Predicate<SinkRecord>> predicates = new ArrayList<>();
        List<Boolean> negations = new ArrayList<>();
        int index = 0;
        for (JsonNode stage : request.get("transforms")) {
            try {
                transforms.add(configured(stage));
                JsonNode predicate = stage.get("predicate");
                predicates.add(predicate == null || predicate.isNull() ? null : configured(predicate));
                negations.add(stage.path("negate").asBoolean(false));
            } catch (Throwable e) {
                return failure("config_error", null, index, e);
            }
            index++;
        }

        SinkRecord record;
        try {
            record = record(request.get("record"), reader);
        } catch (Throwable e) {
            return failure("error", "input", -1, e);
        }

        for (index = 0; index < transforms.size(); index++) {
            Predicate<SinkRecord> predicate = predicates.get(index);
            try {
                if (predicate == null || negations.get(index) ^ predicate.test(record)) {
                    record = transforms.get(index).apply(record);
                }
            } catch (Throwable e) {
                return failure("error", "transform", index, e);
            }
            if (record == null) {
                ObjectNode dropped = MAPPER.createObjectNode();
                dropped.put("dropped", true);
                return dropped;
            }
        }

        try {
            ObjectNode result = MAPPER.createObjectNode();
            result.put("topic", record.topic());
            result.put("partition", record.kafkaPartition());
            result.put("timestamp", record.timestamp());
            result.put("key", text(writer.fromConnectData(record.topic(), record.keySchema(), record.key())));
            result.put("value", text(writer.fromConnectData(record.topic(), record.valueSchema(), record.value())));
            ArrayNode headers = result.putArray("headers");
            for (Header header : record.headers()) {
                headers.addArray().add(header.key()).add(Values.convertToString(header.schema(), header.value()));
            }
            return result;
        } catch (Throwable e) {
            return failure("error", "output", -1, e);
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> T configured(JsonNode spec) throws Exception {
        String className = spec.get("class").asText();
        Object made = Class.forName(className).getDeclaredConstructor().newInstance();
        Map<String, Object> props = new HashMap<>();
        props.put("type", className);  // a worker hands every key under the alias, "type" included
        Iterator<Map.Entry<String, JsonNode>> given = spec.path("props").fields();
        while (given.hasNext()) {
            Map.Entry<String, JsonNode> entry = given.next();
            props.put(entry.getKey(), entry.getValue().isNull() ? null : entry.getValue().asText());
        }
        if (made instanceof Transformation) {
            ((Transformation<SinkRecord>) made).configure(props);
        } else {
            ((Predicate<SinkRecord>) made).configure(props);
        }
        return (T) made;
    }

    private static SinkRecord record(JsonNode spec, JsonConverter reader) throws Exception {
        String topic = spec.get("topic").asText();
        SchemaAndValue key = read(reader, topic, spec.get("key"));
        SchemaAndValue value = read(reader, topic, spec.get("value"));
        ConnectHeaders headers = new ConnectHeaders();
        for (JsonNode header : spec.path("headers")) {
            headers.add(header.get(0).asText(), read(reader, topic, header.get(1)));
        }
        JsonNode timestamp = spec.get("timestamp");
        boolean stamped = timestamp != null && !timestamp.isNull();
        return new SinkRecord(
            topic,
            spec.get("partition").asInt(),
            key.schema(),
            key.value(),
            value.schema(),
            value.value(),
            spec.get("offset").asLong(),
            stamped ? timestamp.asLong() : null,
            stamped ? TimestampType.CREATE_TIME : TimestampType.NO_TIMESTAMP_TYPE,
            headers);
    }

    private static SchemaAndValue read(JsonConverter reader, String topic, JsonNode envelope) throws Exception {
        if (envelope == null || envelope.isNull()) {
            return reader.toConnectData(topic, null);
        }
        return reader.toConnectData(topic, MAPPER.writeValueAsBytes(envelope));
    }

    private static String text(byte[] bytes) {
        return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
    }

    private static ObjectNode failure(String kind, String stage, int index, Throwable e) {
        ObjectNode result = MAPPER.createObjectNode();
        ObjectNode error = result.putObject(kind);
        if (stage != null) {
            error.put("stage", stage);
        }
        error.put("index", index);
        error.put("class", e.getClass().getName());
        error.put("message", e.getMessage());
        return result;
    }
}
