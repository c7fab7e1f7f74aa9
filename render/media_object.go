package render

import "github.com/aviary-dev/aviary/storage"

// MediaObject renders media m with fields f, as a post's includes show it
// (used by the direct message lookups' attachments.media_keys expansion);
// urls builds url and preview_image_url (nil: neither is shown).
func MediaObject(m storage.Media, f FieldSet, urls *MediaURLs) Media {
	return renderMedia(m, f, urls)
}
