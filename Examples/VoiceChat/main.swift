// Two or more terminals join a match and talk. Each runs:
//   swift run VoiceChat --account ann --players 2                    (system microphone and speakers)
//   swift run VoiceChat --account bob --microphone speech.wav --speaker out.wav
// Press Enter to toggle push-to-talk; type "q" and Enter to leave. Needs a running `gamecenter serve`.
import Foundation
import OpenGameKit
import OpenGameKitVoice

var options: [String: String] = [:]
var arguments = CommandLine.arguments.dropFirst()
while let key = arguments.popFirst(), key.hasPrefix("--"), let value = arguments.popFirst() { options[String(key.dropFirst(2))] = value }
guard let account = options["account"] else {
    print("usage: VoiceChat --account NAME [--players N] [--channel NAME] [--microphone IN.wav] [--speaker OUT.wav] [--server URL]")
    exit(2)
}

let server = URL(string: options["server"] ?? ProcessInfo.processInfo.environment["GAMECENTER_URL"] ?? "http://127.0.0.1:8080")!
let storage = FileManager.default.temporaryDirectory.appendingPathComponent("voicechat-\(account)")
let gameCenter = GKGameCenter(server: server, bundleID: "com.example.tapper", storageDirectory: storage)
do {
    try await gameCenter.localPlayer.authenticate(.signIn(account: account, password: "voice chat \(account)"))
} catch {
    try await gameCenter.localPlayer.authenticate(.signUp(account: account, password: "voice chat \(account)", alias: account.capitalized))
}

let players = Int(options["players"] ?? "2") ?? 2
print("signed in as \(gameCenter.localPlayer.alias); looking for \(players - 1) other player(s)…")
let match = try await gameCenter.matchmaker.findMatch(for: GKMatchRequest(minPlayers: players, maxPlayers: players))

// Audio: WAV files when given (a file that ends leaves the microphone silent), else the system's devices.
let microphone: (any VoiceAudioSource)?
let speaker: WAVFileSink?
do {
    microphone = try options["microphone"].map { try WAVFileSource(path: $0) }
    speaker = try options["speaker"].map { try WAVFileSink(path: $0) }
} catch {
    print("VoiceChat: \(error)")
    exit(1)
}
match.setVoiceAudio(source: microphone, sink: speaker)

let chat = try match.voiceChat(named: options["channel"] ?? "all")
chat.playerStateUpdateHandler = { playerID, state in
    switch state {
    case .connected: print("\(playerID) joined the channel")
    case .disconnected: print("\(playerID) left the channel")
    case .speaking: print("🔊 \(playerID) is speaking")
    case .silent: print("   \(playerID) is silent")
    }
}
chat.start()
chat.isActive = true
if let waiting = chat.waitingFor { print("waiting: \(waiting)") }
print("talking in \(chat.name) (push-to-talk is on: Enter mutes and unmutes, q leaves)")

while let line = readLine() {
    if line == "q" { break }
    chat.isActive.toggle()
    print(chat.isActive ? "microphone on" : "microphone off")
}
match.disconnect()
try speaker?.close()
