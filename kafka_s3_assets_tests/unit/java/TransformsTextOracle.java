import java.nio.charset.StandardCharsets;
import java.text.ParsePosition;
import java.text.SimpleDateFormat;
import java.util.Date;
import java.util.Locale;
import java.util.TimeZone;

/** Java's answers for the conversions the transforms reproduce, one tab-separated request per stdin line:
 *  "double <bits>" and "float <bits>" print Double/Float.toString; "format <pattern> <millis>" prints
 *  SimpleDateFormat's text in UTC; "parse <pattern> <text>" prints the epoch millis parse(String) reads, or
 *  ERR; "narrow <int8|int16|int32|int64> <double>" prints the Double's byteValue() ... longValue(). */
public class TransformsTextOracle {
    public static void main(String[] args) throws Exception {
        java.io.BufferedReader in = new java.io.BufferedReader(
            new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] p = line.split("\t", -1);
            switch (p[0]) {
                case "double":
                    System.out.println(Double.toString(Double.longBitsToDouble(Long.parseLong(p[1]))));
                    break;
                case "float":
                    System.out.println(Float.toString(Float.intBitsToFloat(Integer.parseInt(p[1]))));
                    break;
                case "format": {
                    SimpleDateFormat f = new SimpleDateFormat(p[1], Locale.US);
                    f.setTimeZone(TimeZone.getTimeZone("UTC"));
                    System.out.println(f.format(new Date(Long.parseLong(p[2]))));
                    break;
                }
                case "parse": {
                    SimpleDateFormat f = new SimpleDateFormat(p[1], Locale.US);
                    f.setTimeZone(TimeZone.getTimeZone("UTC"));
                    ParsePosition pos = new ParsePosition(0);
                    Date d = f.parse(p[2], pos);
                    System.out.println(d == null ? "ERR" : Long.toString(d.getTime()));
                    break;
                }
                case "narrow": {
                    Double d = Double.valueOf(p[2]);
                    long v = p[1].equals("int8") ? d.byteValue() : p[1].equals("int16") ? d.shortValue()
                        : p[1].equals("int32") ? d.intValue() : d.longValue();
                    System.out.println(v);
                    break;
                }
                default:
                    System.out.println("ERR unknown request " + p[0]);
            }
        }
    }
}
