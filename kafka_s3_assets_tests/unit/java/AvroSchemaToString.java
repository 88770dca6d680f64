import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import org.apache.avro.Schema;

/**
 * Reads one Avro schema JSON per line on stdin; prints, per line, "OK\t" and Avro's
 * Schema.toString() of it, or "ERR\t" and the reason it does not parse. One JVM serves every
 * schema of a test run.
 */
public class AvroSchemaToString {
  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintStream out = new PrintStream(System.out, true, "UTF-8");
    String line;
    while ((line = in.readLine()) != null) {
      try {
        String written = new Schema.Parser().parse(line).toString();
        out.println("OK\t" + written);  // compact JSON: no raw line breaks
      } catch (Exception e) {
        out.println("ERR\t" + e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).replace("\n", " "));
      }
    }
  }
}
