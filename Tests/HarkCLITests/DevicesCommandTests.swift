import Foundation
import Testing

@Suite struct DevicesCommandTests {
    @Test func listsCaptureDevicesWithDefaultFirst() throws {
        let rig = try ALSATestRig(input: Data())
        try rig.startPulseAudio()
        let result = try runHark(["devices"], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        let lines = String(decoding: result.standardOutput, as: UTF8.self).split(separator: "\n").map(String.init)
        let names = lines.filter { !$0.hasPrefix(" ") }
        #expect(names.first == "default", "\(lines)")
        #expect(names.contains("filecap") && names.contains("pulse"))
        // Descriptions are indented under their device, as arecord -L prints them.
        #expect(lines.contains { $0.hasPrefix("    ") })
    }
}
