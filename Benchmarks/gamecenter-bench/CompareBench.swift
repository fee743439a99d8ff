import ArgumentParser
import Foundation

/// `gamecenter-bench compare --baseline OLD -- BENCH ARGS…`: any bench on an older build and on this one in the same
/// run. The two `gamecenter-bench` executables take turns (the older first, then this one, as many rounds as asked,
/// the order swapped each round so that neither always runs on a warmer or a busier machine); each run measures its
/// own anchor as it always does. Every run's output is printed, then a table that puts each figure of the older build
/// beside this build's: lines are matched by their words (numbers aside) and their order, and each number is the
/// median over the rounds.
struct CompareBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Runs a bench on an older gamecenter-bench and on this one, taking turns, and prints each figure old beside new with the ratio.",
        discussion: """
            Build the older one with scripts/bench-baseline.sh COMMIT (a worktree and a release build folder of its \
            own). Example: gamecenter-bench compare --baseline /work/.build-baseline/release/gamecenter-bench -- relay \
            --matches 200
            """
    )

    @Option(help: "The older gamecenter-bench executable.") var baseline: String
    @Option(help: "Runs of each build, taking turns.") var rounds = 1
    @Argument(parsing: .captureForPassthrough, help: "The bench and its options, after --.") var bench: [String] = []

    /// The bench and its options, without the `--` before them.
    private var benchArguments: [String] { bench.first == "--" ? Array(bench.dropFirst()) : bench }

    func validate() throws {
        guard FileManager.default.isExecutableFile(atPath: baseline) else { throw ValidationError("--baseline \(baseline) is not an executable") }
        guard (1...9).contains(rounds) else { throw ValidationError("--rounds is 1 to 9") }
        guard let first = benchArguments.first, !first.hasPrefix("-"), first != "compare" else {
            throw ValidationError("name the bench to run after --, e.g. `compare --baseline OLD -- relay`")
        }
    }

    func run() async throws {
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path
        let arguments = benchArguments
        var outputs: [String: [String]] = ["baseline": [], "this build": []]
        for round in 1...rounds {
            let order = round % 2 == 1 ? [("baseline", baseline), ("this build", here)] : [("this build", here), ("baseline", baseline)]
            for (name, executable) in order {
                print("\n### \(name), round \(round): \(executable) \(arguments.joined(separator: " "))\n")
                let output = try Self.run(executable, arguments)
                print(output)
                outputs[name]!.append(output)
            }
        }
        print("\n## \(arguments.joined(separator: " ")): the older build beside this one (median of \(rounds) round\(rounds == 1 ? "" : "s"))\n")
        for line in FigureComparison(baseline: outputs["baseline"]!, current: outputs["this build"]!).lines { print(line) }
    }

    /// Runs `executable` to the end and returns what it printed; a failing run is an error.
    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ValidationError("\(executable) \(arguments.joined(separator: " ")) exited with \(process.terminationStatus)")
        }
        return String(decoding: data, as: UTF8.self)
    }
}

/// Figures of two builds' outputs side by side: each line with numbers is matched to the line with the same words
/// (its numbers aside) at the same place among such lines in the other output; each number becomes
/// "old → new (×ratio)", old and new the medians over the rounds.
struct FigureComparison {
    let lines: [String]

    init(baseline: [String], current: [String]) {
        let old = Self.figures(baseline), new = Self.figures(current)
        var lines: [String] = []
        var unmatched = 0
        for (key, oldValues) in old.ordered {
            guard let newValues = new.values[key], newValues.count == oldValues.count else {
                unmatched += 1
                continue
            }
            var text = key.skeleton
            for (before, after) in zip(oldValues, newValues) {
                let ratio = before == 0 ? "" : String(format: " ×%.2f", after / before)
                guard let slot = text.range(of: Self.slot) else { break }
                text.replaceSubrange(slot, with: "\(Self.format(before)) → \(Self.format(after))\(ratio)")
            }
            lines.append(text)
        }
        if unmatched > 0 { lines.append("(\(unmatched) line\(unmatched == 1 ? "" : "s") of the older build's output had no match in this build's)") }
        self.lines = lines
    }

    /// Where a number stood in a line's skeleton (a character no bench prints).
    static let slot = "\u{FFFC}"

    /// A line's words with each number as ``slot``, and which such line it is (the same words may recur).
    struct Key: Hashable {
        var skeleton: String
        var occurrence: Int
    }

    /// Each output's lines with numbers, by key, with the median of each number over the outputs.
    static func figures(_ outputs: [String]) -> (ordered: [(Key, [Double])], values: [Key: [Double]]) {
        var samples: [Key: [[Double]]] = [:]
        var order: [Key] = []
        for output in outputs {
            var seen: [String: Int] = [:]
            for line in output.split(separator: "\n").map(String.init) {
                let (skeleton, numbers) = parse(line)
                guard !numbers.isEmpty else { continue }
                let key = Key(skeleton: skeleton, occurrence: seen[skeleton, default: 0])
                seen[skeleton, default: 0] += 1
                if samples[key] == nil { order.append(key) }
                samples[key, default: []].append(numbers)
            }
        }
        var values: [Key: [Double]] = [:]
        for (key, runs) in samples {
            let count = runs.map(\.count).min() ?? 0
            values[key] = (0..<count).map { i in median(runs.map { $0[i] }) }
        }
        return (order.map { ($0, values[$0]!) }, values)
    }

    /// The line with its numbers replaced by ``slot``, and the numbers; digits inside a word ("p99", "UTF8") are
    /// part of the word.
    static func parse(_ line: String) -> (String, [Double]) {
        var skeleton = ""
        var numbers: [Double] = []
        var characters = line[...]
        // Whether the character before is part of a word (a letter, "_", or a digit after one).
        var inWord = false
        while let character = characters.first {
            let isDigit = character.isASCII && character.isNumber
            guard isDigit, !inWord else {
                skeleton.append(character)
                inWord = character.isLetter || character == "_" || (isDigit && inWord)
                characters = characters.dropFirst()
                continue
            }
            let digits = characters.prefix { ($0.isASCII && $0.isNumber) || $0 == "." || $0 == "," }
            var text = String(digits)
            // A trailing "." or "," ends the sentence, not the number.
            while let last = text.last, last == "." || last == "," { text.removeLast() }
            characters = characters.dropFirst(text.count)
            if let value = Double(text.replacingOccurrences(of: ",", with: "")) {
                numbers.append(value)
                skeleton.append(slot)
            } else {
                skeleton.append(text)
            }
            inWord = false
        }
        return (skeleton, numbers)
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// Whole numbers as they are, large ones without decimals, small ones to three significant digits.
    static func format(_ value: Double) -> String {
        if abs(value) >= 1000 || value == value.rounded() { return String(format: "%.0f", value) }
        return String(format: "%.3g", value)
    }
}
