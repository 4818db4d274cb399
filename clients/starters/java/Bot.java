// A twistarena starter bot in Java, JDK only (17+), reading the bridge's plain-text form:
//   javac -d build Bot.java
//   twistarena bot --exec "java -cp build Bot" --text --server ... --match ... --token ...
// Each decision is a block of lines ending with "end"; the bot answers one action id.
// The connection is the bridge's (the SDK): it reconnects and resumes, follows a
// refusal's twistarena-owner at once, and honours twistarena-retry-after-ms by
// trying another server of --server first and the one that refused only once the
// hint has run out. A Java client that speaks gRPC itself must do the same
// (docs/protocol.md, sections 8 and 9).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.Map;

public class Bot {
    // Lower is better: twist or take a bonus first, then plain card plays,
    // keep Twhist cards for later, decline and take the Twisted row last.
    static final Map<String, Integer> RANK = Map.ofEntries(
        Map.entry("twist", 0), Map.entry("bonus", 0), Map.entry("play", 1),
        Map.entry("extend", 1), Map.entry("start", 1), Map.entry("pick", 1),
        Map.entry("reserve", 1), Map.entry("twhist", 3), Map.entry("decline", 4),
        Map.entry("stop", 4), Map.entry("take", 5));

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        long[] best = null; // {kind rank, card value, id}
        for (String line; (line = in.readLine()) != null; ) {
            String[] words = line.split(" ");
            if (words[0].equals("decision")) {
                best = null;
            } else if (words[0].equals("action")) {
                long id = Long.parseLong(words[1]);
                long kind = 2, card = 0;
                for (int i = 2; i < words.length && !words[i].equals("|"); i++) {
                    String[] kv = words[i].split("=", 2);
                    if (kv[0].equals("kind")) kind = RANK.getOrDefault(kv[1], 2);
                    if (kv[0].equals("card") || kv[0].equals("card.value")) card = Long.parseLong(kv[1]);
                }
                long[] mine = {kind, card, id};
                if (best == null || java.util.Arrays.compare(mine, best) < 0) best = mine;
            } else if (words[0].equals("end")) {
                System.out.println(best[2]);
                System.out.flush();
            } else if (words[0].equals("over")) {
                System.err.println("match over: " + line);
                return;
            }
        }
    }
}
