import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The key order JsonFormat writes after InsertField$Value and ReplaceField$Value on a schemaless value:
 * the iteration order of the HashMap each transform's applySchemaless returns (this is our own code,
 * written from Kafka's InsertField.applySchemaless and ReplaceField.applySchemaless/filter/renamed;
 * connect-transforms is not on this machine, java.util.HashMap is the JVM's own).
 *
 * The source map is built as JsonConverter builds a schemaless object: new HashMap<>(), its members put in
 * the order of the text.
 *
 * stdin, a line per case, fields separated by spaces, each a comma-separated list of base64 (UTF-8)
 * strings, "-" for an empty list:
 *   insert SOURCE_KEYS INSERTED_NAMES
 *       new HashMap<>(source), then put of each inserted name in order
 *   replace SOURCE_KEYS EXCLUDE INCLUDE RENAMES
 *       new HashMap<>(source.size()), then put of each kept source entry (renamed) in the source's
 *       iteration order; RENAMES alternates a name and its new name
 * stdout, a line per case: the result's keys in iteration order, in the same form.
 */
public class SchemalessFieldOrder {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        String line;
        while ((line = in.readLine()) != null) {
            String[] fields = line.split(" ");
            Map<String, Object> source = new HashMap<>();
            for (String key : list(fields[1])) {
                source.put(key, key);
            }
            Map<String, Object> result;
            if (fields[0].equals("insert")) {
                result = new HashMap<>(source);
                for (String name : list(fields[2])) {
                    result.put(name, name);
                }
            } else {
                Set<String> exclude = new HashSet<>(list(fields[2]));
                Set<String> include = new HashSet<>(list(fields[3]));
                List<String> pairs = list(fields[4]);
                Map<String, String> renames = new HashMap<>();
                for (int i = 0; i < pairs.size(); i += 2) {
                    renames.put(pairs.get(i), pairs.get(i + 1));
                }
                result = new HashMap<>(source.size());
                for (Map.Entry<String, Object> e : source.entrySet()) {
                    String name = e.getKey();
                    if (!exclude.contains(name) && (include.isEmpty() || include.contains(name))) {
                        String renamed = renames.get(name);
                        result.put(renamed == null ? name : renamed, e.getValue());
                    }
                }
            }
            List<String> keys = new ArrayList<>();
            for (String key : result.keySet()) {
                keys.add(Base64.getEncoder().encodeToString(key.getBytes(StandardCharsets.UTF_8)));
            }
            out.append(keys.isEmpty() ? "-" : String.join(",", keys)).append('\n');
        }
        System.out.print(out);
    }

    private static List<String> list(String field) {
        List<String> items = new ArrayList<>();
        if (!field.equals("-")) {
            for (String item : field.split(",")) {
                items.add(new String(Base64.getDecoder().decode(item), StandardCharsets.UTF_8));
            }
        }
        return items;
    }
}
