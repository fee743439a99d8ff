import ArgumentParser
import Foundation
import OpenGameKitVoice

/// Real speech for the voice bench: a paragraph rendered by `espeak-ng` to a WAV file, read as 48 kHz mono 20 ms
/// frames by `WAVFileSource` (which resamples espeak's 22,050 Hz), repeated to the number of frames asked for.
enum SpeechFrames {
    /// What espeak-ng says: sentences with pauses between them, so the detector hears speech and silence.
    static let text = """
        The relay forwards every voice packet to the players listening on its channel. Each packet carries twenty \
        milliseconds of speech, encoded with Opus at twenty four kilobits per second. The receiver puts the packets \
        back in order, hides the ones that were lost, and mixes every talker into one stereo frame. Between sentences \
        the detector hears silence, and the sender stops sending until somebody speaks again.
        """

    /// `count` frames of speech rendered into `folder` with `executable`.
    static func render(count: Int, into folder: URL, executable: String) throws -> [[Int16]] {
        let path = folder.appendingPathComponent("speech.wav").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-w", path, text]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ValidationError("\(executable) failed with status \(process.terminationStatus)") }
        let source = try WAVFileSource(path: path)
        var speech: [[Int16]] = []
        while case .frame(let frame) = try source.readFrame() { speech.append(frame) }
        guard !speech.isEmpty else { throw ValidationError("\(executable) rendered no audio") }
        return (0..<count).map { speech[$0 % speech.count] }
    }
}
