import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Properties;
import java.util.TreeMap;

/** Reads one base64-encoded .properties text per stdin line with java.util.Properties.load(Reader) and
 *  prints, per input, one line: "OK" then each entry as base64(key):base64(value), or "ERR <message>". */
public class PropertiesLoad {
    public static void main(String[] args) throws Exception {
        java.io.BufferedReader in = new java.io.BufferedReader(
            new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8));
        Base64.Encoder b64 = Base64.getEncoder();
        String line;
        while ((line = in.readLine()) != null) {
            String text = new String(Base64.getDecoder().decode(line), StandardCharsets.UTF_8);
            Properties props = new Properties();
            try {
                props.load(new StringReader(text));
            } catch (IllegalArgumentException e) {
                System.out.println("ERR " + e.getMessage());
                continue;
            }
            StringBuilder out = new StringBuilder("OK");
            for (var e : new TreeMap<Object, Object>(props).entrySet()) {
                out.append(' ').append(b64.encodeToString(((String) e.getKey()).getBytes(StandardCharsets.UTF_8)))
                   .append(':').append(b64.encodeToString(((String) e.getValue()).getBytes(StandardCharsets.UTF_8)));
            }
            System.out.println(out);
        }
    }
}
